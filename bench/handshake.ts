import { spawn } from "node:child_process";
import pg from "pg";
import { childProcessEnv } from "../lib/env";
import type { MessageView } from "../lib/messages/views";
import type { RequestView } from "../lib/requests/views";
import { callApi, type Agent, type ConsoleClient } from "./clients";
import { withTimeout } from "./raw";
import { now, sleep } from "./stats";

/** Ids kept for a measurement to ask for; only the few it asks for right away matter. */
const MAX_SEEN_IDS = 10_000;

/**
 * Sees every commit of Handshake's events the way the server's own bridge does: a raw LISTEN on
 * the `handshake_events` channel. PostgreSQL signals all listeners of a commit at once, so the
 * witness receives each id at "commit + raw NOTIFY latency"; that is the clock G3.1 starts from.
 *
 * It listens only while a push is measured (`listening`). A listener costs PostgreSQL at every
 * notifying commit and the bench a parse of every event, on the two cores the server shares:
 * left listening, the witness weighed on the phases that never read it.
 */
export class EventWitness {
  private readonly seen = new Map<number, number>();
  private readonly waiters = new Map<number, (at: number) => void>();
  private isListening = false;

  private constructor(private readonly client: pg.Client) {}

  static async start(databaseUrl: string): Promise<EventWitness> {
    const client = new pg.Client({
      connectionString: databaseUrl,
      application_name: "bench-witness",
    });
    await client.connect();
    const witness = new EventWitness(client);
    client.on("notification", (message) => witness.record(message.payload, now()));
    return witness;
  }

  private record(payload: string | undefined, at: number): void {
    // The payload starts with the id, alone or before the signed event (migration 016).
    const id = Number.parseInt(payload ?? "", 10);
    const waiter = this.waiters.get(id);
    if (waiter) {
      this.waiters.delete(id);
      waiter(at);
      return;
    }
    this.seen.set(id, at);
    if (this.seen.size <= MAX_SEEN_IDS) return;
    // The older half in one pass: deleting the oldest one at a time skipped every entry deleted
    // before it, each time (docs/PERFORMANCE.md, at 4bff959).
    for (const oldest of this.seen.keys()) {
      if (this.seen.size <= MAX_SEEN_IDS / 2) break;
      this.seen.delete(oldest);
    }
  }

  /** Runs `measure` with the witness listening, and stops listening once it has ended. */
  async listening<T>(measure: () => Promise<T>): Promise<T> {
    await this.client.query("LISTEN handshake_events");
    this.isListening = true;
    try {
      return await measure();
    } finally {
      this.isListening = false;
      await this.client.query("UNLISTEN handshake_events");
      this.seen.clear();
      this.waiters.clear();
    }
  }

  /** When the notification for event `id` reached the witness. */
  receivedAt(id: number, timeoutMs = 5_000): Promise<number> {
    if (!this.isListening) {
      return Promise.reject(new Error(`the witness is not listening: asked for event ${id}`));
    }
    const at = this.seen.get(id);
    if (at !== undefined) {
      this.seen.delete(id);
      return Promise.resolve(at);
    }
    const arrival = new Promise<number>((resolve) => this.waiters.set(id, resolve));
    const waiter = this.waiters.get(id);
    // A wait that ran out leaves, or the id it waited for would resolve it instead of being seen.
    return withTimeout(arrival, timeoutMs, `witness never saw event ${id}`).finally(() => {
      if (this.waiters.get(id) === waiter) this.waiters.delete(id);
    });
  }

  async stop(): Promise<void> {
    await this.client.end();
  }
}

export type PushSamples = {
  /** Per console and request: console receipt minus the witness's receipt of the same NOTIFY. */
  addedMs: number[];
  /** Per request: the first and the last of the consoles to receive it, same clock. */
  firstConsoleAddedMs: number[];
  lastConsoleAddedMs: number[];
  /** Per console and request: console receipt minus the moment POST /requests returned. */
  afterHttpReturnMs: number[];
  /** Per request: the POST /requests round trip. */
  submitMs: number[];
};

type Deferred = { promise: Promise<void>; resolve: () => void };
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/**
 * G3.1: one agent submits plans one at a time (each supersedes its previous pending plan, so the
 * one-pending-per-type rule never refuses); every console must receive the `request.created`
 * event before the next submission.
 */
export async function measurePush(options: {
  baseUrl: string;
  agent: Agent;
  consoles: ConsoleClient[];
  witness: EventWitness;
  count: number;
  warmup?: number;
}): Promise<PushSamples> {
  const { baseUrl, agent, consoles, witness } = options;
  const samples: PushSamples = {
    addedMs: [],
    firstConsoleAddedMs: [],
    lastConsoleAddedMs: [],
    afterHttpReturnMs: [],
    submitMs: [],
  };
  const warmup = options.warmup ?? 10;
  try {
    for (let index = -warmup; index < options.count; index++) {
      const receipts = new Array<number | undefined>(consoles.length);
      let remaining = consoles.length;
      let eventId = 0;
      const allReceived = deferred();
      consoles.forEach((console, slot) => {
        console.onEvent = (event, receivedAt) => {
          if (event.kind !== "request.created" || event.data.agent !== agent.name) return;
          if (receipts[slot] !== undefined) return;
          receipts[slot] = receivedAt;
          eventId = event.id;
          remaining -= 1;
          if (remaining === 0) allReceived.resolve();
        };
      });
      const sentAt = now();
      await callApi<RequestView>(baseUrl, { token: agent.token }, "POST", "/requests", {
        type: "plan_approval",
        payload: { plan: `bench plan ${index}: read the code, change it, run the tests` },
      });
      const returnedAt = now();
      await withTimeout(allReceived.promise, 10_000, "not every console got request.created");
      const witnessedAt = await witness.receivedAt(eventId);
      if (index < 0) continue;
      samples.submitMs.push(returnedAt - sentAt);
      let first = Number.POSITIVE_INFINITY;
      let last = 0;
      for (const receivedAt of receipts) {
        const at = receivedAt ?? Number.NaN;
        samples.addedMs.push(at - witnessedAt);
        samples.afterHttpReturnMs.push(at - returnedAt);
        first = Math.min(first, at);
        last = Math.max(last, at);
      }
      samples.firstConsoleAddedMs.push(first - witnessedAt);
      samples.lastConsoleAddedMs.push(last - witnessedAt);
    }
  } finally {
    for (const console of consoles) console.onEvent = null;
  }
  return samples;
}

/**
 * G3.2: the agent submits a plan over HTTP and then long-polls its inbox (as agents/worker-loop
 * does); a scripted Lead on a console socket approves over HTTP as soon as `request.created`
 * arrives; the loop ends when the long-poll returns the decision.
 */
export async function measureLoop(options: {
  baseUrl: string;
  agent: Agent;
  lead: ConsoleClient;
  leadToken: string;
  loops: number;
  warmup?: number;
  /** The agent's inbox cursor (0 for a new agent); the new one is returned. */
  cursor: number;
}): Promise<{ loopMs: number[]; leadErrors: number; cursor: number }> {
  const { baseUrl, agent, lead, leadToken } = options;
  let leadErrors = 0;
  lead.onEvent = (event) => {
    if (event.kind !== "request.created" || event.data.agent !== agent.name) return;
    void callApi(
      baseUrl,
      { token: leadToken },
      "POST",
      `/requests/${String(event.data.requestId)}/responses`,
      { type: "plan_approval_response", approve: true },
    ).catch((error: unknown) => {
      leadErrors += 1;
      console.error("[bench] lead decision failed", error);
    });
  };
  const loopMs: number[] = [];
  let cursor = options.cursor;
  try {
    for (let index = -(options.warmup ?? 10); index < options.loops; index++) {
      const startedAt = now();
      const request = await callApi<RequestView>(
        baseUrl,
        { token: agent.token },
        "POST",
        "/requests",
        { type: "plan_approval", payload: { plan: `bench loop ${index}` } },
      );
      for (;;) {
        const inbox = await callApi<{ messages: MessageView[]; cursor: number }>(
          baseUrl,
          { token: agent.token },
          "GET",
          `/inbox?after=${cursor}&wait=30`,
        );
        cursor = inbox.cursor;
        const decision = inbox.messages.find(
          (message) => message.metadata.requestId === request.id,
        );
        if (decision) break;
        if (now() - startedAt > 30_000) throw new Error(`no decision for ${request.id}`);
      }
      if (index >= 0) loopMs.push(now() - startedAt);
    }
  } finally {
    lead.onEvent = null;
  }
  return { loopMs, leadErrors, cursor };
}

/**
 * G3.3 submissions: `concurrency` clients, each owning a disjoint slice of the agents and
 * submitting plans round-robin over it for `durationMs`. The first submission to an agent in a
 * round creates its pending plan; later ones supersede it. Returns the last request per agent,
 * all pending, for the decision phase.
 */
export async function measureSubmissions(options: {
  baseUrl: string;
  agents: Agent[];
  concurrency: number;
  durationMs: number;
}): Promise<{ perSecond: number; count: number; errors: number; pending: string[] }> {
  const { baseUrl, agents, concurrency } = options;
  const lastRequest = new Map<string, string>();
  let count = 0;
  let errors = 0;
  const startedAt = now();
  const deadline = startedAt + options.durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const mine = agents.filter((_, index) => index % concurrency === worker);
      for (let turn = 0; now() < deadline; turn++) {
        const agent = mine[turn % mine.length] as Agent;
        try {
          const request = await callApi<RequestView>(
            baseUrl,
            { token: agent.token },
            "POST",
            "/requests",
            { type: "plan_approval", payload: { plan: `throughput plan ${turn}` } },
          );
          lastRequest.set(agent.name, request.id);
          count += 1;
        } catch (error) {
          errors += 1;
          if (errors <= 3) console.error("[bench] submission failed", error);
        }
      }
    }),
  );
  const elapsedS = (now() - startedAt) / 1000;
  return { perSecond: count / elapsedS, count, errors, pending: [...lastRequest.values()] };
}

/** G3.3 decisions: `concurrency` Lead clients approve the given pending requests. */
export async function measureDecisions(options: {
  baseUrl: string;
  leadToken: string;
  requestIds: string[];
  concurrency: number;
}): Promise<{ perSecond: number; count: number; errors: number }> {
  let next = 0;
  let count = 0;
  let errors = 0;
  const startedAt = now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (;;) {
        const id = options.requestIds[next++];
        if (id === undefined) return;
        try {
          await callApi(
            options.baseUrl,
            { token: options.leadToken },
            "POST",
            `/requests/${id}/responses`,
            { type: "plan_approval_response", approve: true },
          );
          count += 1;
        } catch (error) {
          errors += 1;
          if (errors <= 3) console.error("[bench] decision failed", error);
        }
      }
    }),
  );
  const elapsedS = (now() - startedAt) / 1000;
  return { perSecond: count / elapsedS, count, errors };
}

export type LongPollLoad = {
  /** Long-polls currently sent and not yet answered. */
  inFlight(): number;
  stop(): Promise<{ completed: number; errors: number }>;
};

/** Every agent keeps one `GET /inbox?wait=30` open, re-issuing it as soon as it returns. */
export function startLongPolls(baseUrl: string, agents: Agent[], afterId: number): LongPollLoad {
  let isStopped = false;
  let inFlight = 0;
  let completed = 0;
  let errors = 0;
  // One controller per agent: a single shared signal would collect an abort listener per fetch.
  const controllers = agents.map(() => new AbortController());
  const loops = agents.map(async (agent, index) => {
    const signal = (controllers[index] as AbortController).signal;
    let cursor = afterId;
    while (!isStopped) {
      inFlight += 1;
      try {
        const inbox = await callApi<{ cursor: number }>(
          baseUrl,
          { token: agent.token },
          "GET",
          `/inbox?after=${cursor}&wait=30`,
          undefined,
          signal,
        );
        cursor = inbox.cursor;
        completed += 1;
      } catch (error) {
        if (isStopped) return;
        errors += 1;
        if (errors <= 3) console.error("[bench] long-poll failed", error);
        await sleep(1_000);
      } finally {
        inFlight -= 1;
      }
    }
  });
  return {
    inFlight: () => inFlight,
    async stop() {
      isStopped = true;
      for (const controller of controllers) controller.abort();
      await Promise.allSettled(loops);
      return { completed, errors };
    },
  };
}

export type Probe = { stop(): Promise<number[]> };

/**
 * Event-loop lag seen from outside: bench/health-probe.ts, its own process, calls
 * `GET /api/v1/health` (one `SELECT 1`) every `intervalMs`. A blocked or saturated server event
 * loop shows up as a slower answer; the idle figure is the base. Resolves once the probe runs.
 */
export async function startHealthProbe(baseUrl: string, intervalMs: number): Promise<Probe> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/health-probe.ts"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: childProcessEnv({ BASE_URL: baseUrl, PROBE_INTERVAL_MS: String(intervalMs) }),
  });
  let output = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const isReady = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (!output.startsWith("ready\n")) return;
        child.stdout.off("data", check);
        resolve(true);
      };
      child.stdout.on("data", check);
    }),
    exited.then(() => false),
  ]);
  if (!isReady) throw new Error(`the health probe exited before it ran: ${output}`);
  return {
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) throw new Error(`the health probe exited with ${code}`);
      const samples = JSON.parse(output.slice("ready\n".length)) as (number | null)[];
      return samples.map((sample) => sample ?? Number.POSITIVE_INFINITY);
    },
  };
}

/** Samples the server's VmRSS once a second. */
export function startRssSampler(read: () => Promise<number>): Probe {
  const samples: number[] = [];
  const record = () =>
    read()
      .then((rss) => samples.push(rss))
      .catch(() => undefined);
  void record();
  const timer = setInterval(() => void record(), 1_000);
  return {
    async stop() {
      clearInterval(timer);
      await record();
      return samples;
    },
  };
}

/** Round trips of one GET, after a short warm-up. */
export async function measureGet(
  baseUrl: string,
  token: string,
  path: string,
  samples: number,
): Promise<number[]> {
  for (let index = 0; index < 5; index++) await callApi(baseUrl, { token }, "GET", path);
  const latencies: number[] = [];
  for (let index = 0; index < samples; index++) {
    const startedAt = now();
    await callApi(baseUrl, { token }, "GET", path);
    latencies.push(now() - startedAt);
  }
  return latencies;
}
