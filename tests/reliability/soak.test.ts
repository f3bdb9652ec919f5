import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { env } from "../../lib/env";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HandshakeClient } from "../../lib/sdk/agent-client";
import { Supervisor } from "../../agents/supervisor";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import type { MessageView } from "../../lib/messages/views";
import type { RequestView } from "../../lib/requests/views";
import { createApiToken } from "../../lib/tokens/mutations";
import { startApiNode, type ApiNode } from "../support/api-node";
import {
  ApiError,
  ConsoleRecorder,
  createHuman,
  createOwnDatabase,
  InboxWaiter,
  LeadApi,
  sessionHeaders,
  signIn,
  sleep,
  waitUntil,
  workerProcessesFor,
  writeFigures,
  type BrowserSession,
  type Human,
} from "../support/reliability";

// Twenty agents against one web node for SOAK_SECONDS (8 s inside a plain `vitest run`; `npm run
// test:reliability` sets 120), a scripted Lead over HTTP answering them, then a drain and a full
// reconciliation of the requests table against the events log and against what each client saw.
//
// The mix: 16 agents are HTTP clients driven by this file (the same HandshakeClient the workers
// use), so every protocol path is exercised at a known rate and every request is accounted for by
// the side that created it: plans (some revised → superseded, some left to expire), risky tool
// calls raised by the server's gate, agent → Lead shutdowns (approved, rejected or expired, then a
// respawn), crashes with a plan pending (→ cancelled at respawn), messages, and unauthorized
// attempts. 4 are real worker processes under the supervisor (scripted model, plan required),
// cycled by the Lead: plan → decision → work → shutdown → exit → respawn. Scripted workers follow a
// fixed script and then idle, so they cannot produce the variety above; they are here for the
// process lifecycle and "no worker left running".

const SOAK_SECONDS = env.SOAK_SECONDS ?? 8;
const API_AGENTS = 16;
const WORKERS = 4;
const WORKER_SCRIPT = "careful-planner";
const LET_EXPIRE = "let-expire";
const WORKER_REST_MS = 3_000;
const SEED = 20261130;

/** Deterministic choices, so a failing run can be replayed with the same decisions. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let database: Awaited<ReturnType<typeof createOwnDatabase>>;
let db: PrismaClient;
let node: ApiNode;
let lead: LeadApi;
let supervisor: Supervisor | undefined;
let dataDir: string;
let recorder: ConsoleRecorder;
let viewerSession: BrowserSession;
let leadSession: BrowserSession;
const agents: SoakAgent[] = [];
const workerNames = Array.from({ length: WORKERS }, (_, i) => `soak-worker-${i}`);
const workerPids = new Set<number>();
const workerStoppedSince = new Map<string, number>();
const figures: Record<string, unknown> = {};

const stats = {
  actions: 0,
  plans: 0,
  revisedPlans: 0,
  plansLeftToExpire: 0,
  toolCalls: 0,
  toolApprovalsRaised: 0,
  toolRunsAfterApproval: 0,
  toolCallsBlockedByGate: 0,
  refusedWhileStopping: 0,
  agentShutdowns: 0,
  crashes: 0,
  respawns: 0,
  messagesSent: 0,
  messagesRefused: 0,
  leadRounds: 0,
  leadDecisions: 0,
  leadRefusedAsStale: 0,
  leadShutdownRequests: 0,
  agentShutdownAnswers: 0,
  workerSpawns: 0,
  workersSeenInProc: 0,
  workerShutdownRequests: 0,
  unauthorizedAttempts: 0,
  unauthorizedSucceeded: 0,
  serverErrors: 0,
  /** Lead shutdown questions refused: the agent had gone, or was itself asking to stop. */
  leadShutdownsRefused: 0,
  unexpectedErrors: [] as string[],
};
const UNAUTHORIZED_KINDS = [
  "answer another agent's request",
  "read another agent's request",
  "act as the Lead",
  "use a token of an ended incarnation",
  "viewer decides",
  "cross-site decision with the Lead's cookie",
] as const;
type UnauthorizedKind = (typeof UNAUTHORIZED_KINDS)[number];
const unauthorizedByKind: Record<
  string,
  { attempts: number; succeeded: number; refusals: Record<string, number> }
> = {};
/** Plain messages sent to an API agent: id → recipient. */
const messagesToAgents = new Map<number, string>();
let plainMessagesFromClients = 0;

function note(error: unknown, context: string): void {
  if (error instanceof ApiError && error.status >= 500) stats.serverErrors += 1;
  if (stats.unexpectedErrors.length < 20) {
    stats.unexpectedErrors.push(
      `${context}: ${error instanceof ApiError ? `${error.status} ${error.code}` : String(error)}`,
    );
  }
}

// Nothing here serialises a decision against the agent's exit and respawn, and the Lead sends all
// of a round's decisions at once: those races are part of what the soak exercises.

class SoakAgent {
  token = "";
  client!: HandshakeClient;
  incarnation = 1;
  readonly waiters: InboxWaiter[] = [];
  /** Every request this agent created (201 from the API), by id. */
  readonly created = new Map<string, string>();
  readonly oldTokens: string[] = [];
  private isStopRequested = false;
  private readonly rng: () => number;

  constructor(
    readonly name: string,
    seed: number,
  ) {
    this.rng = random(seed);
  }

  async register(): Promise<void> {
    const { agent, token } = await lead.registerAgent({ name: this.name, role: "soak" });
    if (this.token) this.oldTokens.push(this.token);
    this.token = token;
    this.incarnation = agent.incarnation;
    this.client = new HandshakeClient(node.url, token);
    const after = this.waiters.at(-1)?.position ?? 0;
    this.waiters.push(
      new InboxWaiter({ name: this.name, token, client: this.client }, after, (message) =>
        this.onMessage(message),
      ).start(),
    );
  }

  arrivalOf(type: string, requestId: string): number | undefined {
    for (const waiter of this.waiters) {
      const at = waiter.arrivalOf(type, requestId);
      if (at !== undefined) return at;
    }
    return undefined;
  }

  countOf(type: string, requestId: string): number {
    return this.waiters.reduce((sum, waiter) => sum + waiter.countOf(type, requestId), 0);
  }

  hasMessage(id: number): number {
    return this.waiters.filter((waiter) => waiter.arrivals.has(id)).length;
  }

  /** The Lead asks us to stop: mostly "busy", sometimes yes (then we exit and are respawned). */
  private async onMessage(message: MessageView): Promise<void> {
    if (message.type !== "shutdown") return;
    const approve = this.rng() < 0.3;
    try {
      await this.client.respond(String(message.metadata.requestId), {
        type: "shutdown_response",
        approve,
        ...(approve ? {} : { feedback: "busy" }),
      });
      stats.agentShutdownAnswers += 1;
      if (approve) this.isStopRequested = true;
    } catch (error) {
      // A request of an earlier incarnation, or decided by expiry first: an answer, not a failure.
      if (
        error instanceof ApiError &&
        ["STALE_INCARNATION", "ALREADY_DECIDED", "UNAUTHENTICATED"].includes(error.code)
      )
        return;
      note(error, `${this.name} answering shutdown`);
    }
  }

  private async submit(body: Parameters<HandshakeClient["submitRequest"]>[0]) {
    const request = await this.client.submitRequest(body);
    // A shutdown asked while the Lead's own shutdown question is pending returns that question.
    if (request.sender === this.name) this.created.set(request.id, request.type);
    return request;
  }

  private async awaitAnswer(type: string, id: string, timeoutMs = 20_000): Promise<boolean> {
    return waitUntil(`${this.name}: ${type} for ${id}`, () => this.arrivalOf(type, id), timeoutMs)
      .then(() => true)
      .catch(() => false);
  }

  /** Stands in for this agent's supervisor: report the exit, then start a new incarnation. */
  private async restart(exitCode: number | null): Promise<void> {
    // The inbox loop stops first (an answer it is sending completes), then the exit is reported
    // and the new incarnation registered, while the Lead keeps deciding.
    await this.waiters.at(-1)?.stop();
    if (exitCode !== null) {
      await lead
        .reportExit(this.name, { incarnation: this.incarnation, exitCode, signal: null })
        .catch((error: unknown) => {
          if (!(error instanceof ApiError && error.code === "STALE_INCARNATION")) throw error;
        });
    }
    await this.register();
    stats.respawns += 1;
    this.isStopRequested = false;
  }

  async run(deadline: number, others: SoakAgent[]): Promise<void> {
    for (let n = 1; Date.now() < deadline; n++) {
      stats.actions += 1;
      const timeLeft = deadline - Date.now();
      try {
        if (this.isStopRequested) await this.restart(0);
        const roll = this.rng();
        if (roll < 0.34) await this.planFlow(n, timeLeft > 8_000);
        else if (roll < 0.52) await this.toolFlow(n);
        else if (roll < 0.7) await this.messageFlow(n, others);
        else if (roll < 0.78) await this.shutdownFlow(timeLeft > 8_000);
        else if (roll < 0.83) await this.crashFlow(n);
        else if (roll < 0.95) await this.unauthorizedFlow(others);
        else await this.heartbeat();
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          // Our incarnation was ended for us (a forced stop after an unanswered shutdown).
          await this.restart(null).catch((inner: unknown) => note(inner, `${this.name} respawn`));
        } else {
          note(error, `${this.name} action ${n}`);
        }
      }
      await sleep(40 + this.rng() * 120);
    }
  }

  /** "Working", unless this agent already agreed to stop: stopping is one-way. */
  private async heartbeat(): Promise<void> {
    await this.client.heartbeat("working").catch((error: unknown) => {
      if (!(error instanceof ApiError && error.code === "AGENT_STOPPING")) throw error;
      stats.refusedWhileStopping += 1;
    });
  }

  /** Null when the agent agreed to stop meanwhile (from its inbox loop): it asks for no new work. */
  private async submitUnlessStopping(
    body: Parameters<typeof this.submit>[0],
  ): Promise<Awaited<ReturnType<typeof this.submit>> | null> {
    try {
      return await this.submit(body);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "AGENT_STOPPING")) throw error;
      stats.refusedWhileStopping += 1;
      return null;
    }
  }

  private async planFlow(n: number, mayExpire: boolean): Promise<void> {
    const letExpire = mayExpire && this.rng() < 0.1;
    let request = await this.submitUnlessStopping({
      type: "plan_approval",
      payload: { plan: `${this.name} plan ${n}`, ...(letExpire ? { summary: LET_EXPIRE } : {}) },
      idempotencyKey: `plan-${n}`,
      ...(letExpire ? { timeoutSeconds: 5 } : {}),
    });
    if (!request) return;
    stats.plans += 1;
    if (letExpire) stats.plansLeftToExpire += 1;
    if (!letExpire && this.rng() < 0.2) {
      // A revised plan before the Lead answered: the first becomes superseded (unless answered).
      request = await this.submitUnlessStopping({
        type: "plan_approval",
        payload: { plan: `${this.name} plan ${n}, revised` },
        idempotencyKey: `plan-${n}-revised`,
      });
      if (!request) return;
      stats.revisedPlans += 1;
    }
    await this.awaitAnswer("plan_approval_response", request.id, letExpire ? 30_000 : 20_000);
  }

  private async toolFlow(n: number): Promise<void> {
    const args = { command: `rm -rf build/${this.name}-${n}` };
    const push = { command: `git push origin ${this.name}-${n}` };
    const chosen = this.rng() < 0.5 ? args : push;
    stats.toolCalls += 1;
    const verdict = await this.client.checkToolCall("bash", chosen);
    if (verdict.code === "PLAN_GATE_BLOCKED") {
      stats.toolCallsBlockedByGate += 1;
      return;
    }
    // It agreed to stop (answering the Lead from its inbox loop) while choosing this call.
    if (verdict.code === "AGENT_STOPPING") {
      stats.refusedWhileStopping += 1;
      return;
    }
    if (verdict.code !== "TOOL_APPROVAL_REQUIRED" || !verdict.requestId) {
      throw new Error(`unexpected verdict ${JSON.stringify(verdict)}`);
    }
    this.created.set(verdict.requestId, "tool_approval");
    stats.toolApprovalsRaised += 1;
    if (!(await this.awaitAnswer("tool_approval_response", verdict.requestId))) return;
    const request = await this.client.getRequest(verdict.requestId);
    if (request.status !== "approved") return;
    const again = await this.client.checkToolCall("bash", chosen);
    if (again.code === "AGENT_STOPPING") {
      stats.refusedWhileStopping += 1;
      return;
    }
    if (!again.allowed) throw new Error(`approved call refused: ${JSON.stringify(again)}`);
    stats.toolRunsAfterApproval += 1;
  }

  private async messageFlow(n: number, others: SoakAgent[]): Promise<void> {
    const peer = others[Math.floor(this.rng() * others.length)];
    const to = this.rng() < 0.5 || !peer || peer === this ? "lead" : peer.name;
    const message = await this.client
      .sendMessage(to, `${this.name} says ${n}`)
      .catch((error: unknown) => {
        // The peer is between incarnations: refused before anything is stored.
        if (error instanceof ApiError && error.code === "AGENT_NOT_ACTIVE") return null;
        throw error;
      });
    if (!message) {
      stats.messagesRefused += 1;
      return;
    }
    stats.messagesSent += 1;
    plainMessagesFromClients += 1;
    if (to !== "lead") messagesToAgents.set(message.id, to);
  }

  /** The Lead's shutdown question named by a 409 REQUEST_PENDING, or null for any other refusal. */
  private leadsPendingShutdown(error: unknown): string | null {
    if (!(error instanceof ApiError) || error.code !== "REQUEST_PENDING") return null;
    return typeof error.error.requestId === "string" ? error.error.requestId : null;
  }

  private async shutdownFlow(mayExpire: boolean): Promise<void> {
    const letExpire = mayExpire && this.rng() < 0.3;
    const asked = await this.submit({
      type: "shutdown",
      payload: { reason: letExpire ? LET_EXPIRE : "my work is done" },
      ...(letExpire ? { timeoutSeconds: 5 } : {}),
    }).then(
      (request) => ({ request, leadsQuestion: null }),
      (error: unknown) => {
        // "Asking twice to stop is one question": the Lead's, raised since this agent last read
        // its inbox, is pending, and the 409 names it for this agent to answer instead.
        const leadsQuestion = this.leadsPendingShutdown(error);
        if (leadsQuestion === null) throw error;
        return { request: null, leadsQuestion };
      },
    );
    stats.agentShutdowns += 1;
    if (asked.request === null) {
      const answered = await this.client
        .respond(asked.leadsQuestion, { type: "shutdown_response", approve: true })
        .catch((error: unknown) => {
          // Our inbox loop answered it first.
          if (error instanceof ApiError && error.code === "ALREADY_DECIDED") return null;
          throw error;
        });
      if (answered) stats.agentShutdownAnswers += 1;
      if ((answered ?? (await this.client.getRequest(asked.leadsQuestion))).status === "approved") {
        await this.restart(0);
      }
      return;
    }
    const { request } = asked;
    if (!(await this.awaitAnswer("shutdown_response", request.id, 30_000))) return;
    const answer = await this.client.getRequest(request.id);
    // Approved, or expired under the "approve" policy: the agent stops and is started again.
    if (answer.status === "approved" || answer.status === "expired") await this.restart(0);
  }

  private async crashFlow(n: number): Promise<void> {
    await this.submit({
      type: "plan_approval",
      payload: { plan: `${this.name} plan ${n}, about to crash` },
      idempotencyKey: `plan-${n}-crash`,
    });
    stats.crashes += 1;
    await this.restart(1);
  }

  /** Something this agent (or a viewer, or a cross-site page) must not be able to do. */
  async unauthorizedFlow(others: SoakAgent[], forcedKind?: UnauthorizedKind): Promise<void> {
    const candidates = others.filter((other) => other !== this && other.created.size > 0);
    const peer = candidates[Math.floor(this.rng() * candidates.length)];
    const peerEntry = peer ? [...peer.created].at(-1) : undefined;
    const peerRequest = peerEntry?.[0];
    const responseType = `${peerEntry?.[1] ?? "plan_approval"}_response`;
    const kind =
      forcedKind ??
      UNAUTHORIZED_KINDS[Math.floor(this.rng() * UNAUTHORIZED_KINDS.length)] ??
      "act as the Lead";
    /** true: it worked (a hole); false: refused; null: nothing to try it on yet. */
    const attempt = async (): Promise<boolean | null> => {
      const post = (session: BrowserSession, headers: Record<string, string> = {}) =>
        fetch(`${node.url}/api/v1/requests/${peerRequest}/responses`, {
          method: "POST",
          headers: { "content-type": "application/json", ...sessionHeaders(session), ...headers },
          body: JSON.stringify({ type: responseType, approve: true }),
        }).then((response) => response.ok);
      switch (kind) {
        case "answer another agent's request":
          if (!peerRequest) return null;
          return this.client
            .respond(peerRequest, { type: responseType, approve: true })
            .then(() => true);
        case "read another agent's request":
          if (!peerRequest) return null;
          return this.client.getRequest(peerRequest).then(() => true);
        case "use a token of an ended incarnation": {
          const stale = this.oldTokens.at(-1);
          if (!stale) return null;
          return new HandshakeClient(node.url, stale)
            .submitRequest({ type: "plan_approval", payload: { plan: "from the grave" } })
            .then(() => true);
        }
        case "viewer decides":
          if (!peerRequest) return null;
          return post(viewerSession);
        case "cross-site decision with the Lead's cookie":
          if (!peerRequest) return null;
          return post(leadSession, {
            origin: "https://evil.example",
            "sec-fetch-site": "cross-site",
          });
        case "act as the Lead":
          return new LeadApi(node.url, this.token)
            .requestShutdown(peer?.name ?? this.name)
            .then(() => true);
      }
    };
    const entry = (unauthorizedByKind[kind] ??= { attempts: 0, succeeded: 0, refusals: {} });
    const succeeded = await attempt().catch((error: unknown) => {
      if (error instanceof ApiError && error.status >= 500) note(error, kind);
      const code = error instanceof ApiError ? `${error.status} ${error.code}` : String(error);
      entry.refusals[code] = (entry.refusals[code] ?? 0) + 1;
      return false;
    });
    if (succeeded === null) return;
    entry.attempts += 1;
    stats.unauthorizedAttempts += 1;
    if (succeeded) {
      entry.succeeded += 1;
      stats.unauthorizedSucceeded += 1;
    }
  }
}

/** The scripted Lead: answers what is addressed to it, talks to agents, cycles the workers. */
async function leadLoop(
  isLoadRunning: () => boolean,
  mayRespawnWorkers: () => boolean,
  isDone: () => boolean,
): Promise<void> {
  const rng = random(SEED);
  let lastTalk = Date.now();
  let lastWorkerCheck = 0;
  for (let round = 1; !isDone(); round++) {
    stats.leadRounds = round;
    try {
      const pending = await lead.pendingRequests();
      // The Lead's choices are drawn in list order, so a run replays; the calls go out together.
      const decisions = pending
        .filter((request) => request.target === "lead" && !isLeftToExpire(request))
        .map((request) => ({
          request,
          approve: rng() < (request.type === "shutdown" ? 0.8 : 0.7),
        }));
      await Promise.all(decisions.map(({ request, approve }) => decide(request, approve)));
      if (isLoadRunning() && Date.now() - lastTalk > 700) {
        lastTalk = Date.now();
        await talkToAgents(rng, pending);
      }
      if (Date.now() - lastWorkerCheck > 400) {
        lastWorkerCheck = Date.now();
        await cycleWorkers(mayRespawnWorkers());
      }
    } catch (error) {
      note(error, "lead round");
    }
    await sleep(100);
  }
}

function isLeftToExpire(request: RequestView): boolean {
  return request.payload.summary === LET_EXPIRE || request.payload.reason === LET_EXPIRE;
}

async function decide(request: RequestView, approve: boolean): Promise<void> {
  try {
    await lead.respond(request.id, {
      type: `${request.type}_response`,
      approve,
      ...(approve ? {} : { feedback: "not like this" }),
    });
    stats.leadDecisions += 1;
  } catch (error) {
    // Superseded, cancelled at a respawn, or expired since the list was read.
    if (
      error instanceof ApiError &&
      ["ALREADY_DECIDED", "STALE_INCARNATION", "STALE_WORK_VERSION"].includes(error.code)
    ) {
      stats.leadRefusedAsStale += 1;
      return;
    }
    throw error;
  }
}

/**
 * The Lead's shutdown question is refused, as documented, when the agent has gone or is itself
 * asking to stop (409 REQUEST_PENDING: its shutdown, raised since the Lead read the pending list,
 * is the answer). Any other refusal is the soak's to report.
 */
function toleratePendingShutdown(error: unknown): void {
  const isExpected =
    error instanceof ApiError &&
    (error.code === "AGENT_NOT_ACTIVE" || error.code === "REQUEST_PENDING");
  if (!isExpected) throw error;
  stats.leadShutdownsRefused += 1;
}

async function talkToAgents(rng: () => number, pending: RequestView[]): Promise<void> {
  const agent = agents[Math.floor(rng() * agents.length)];
  if (!agent) return;
  const message = await lead
    .sendMessage(agent.name, `from the Lead, round ${Date.now()}`)
    .catch((error: unknown) => {
      if (error instanceof ApiError && error.code === "AGENT_NOT_ACTIVE") return null;
      throw error;
    });
  if (message) {
    plainMessagesFromClients += 1;
    messagesToAgents.set(message.id, agent.name);
  } else {
    stats.messagesRefused += 1;
  }
  const isAsked = pending.some((r) => r.type === "shutdown" && r.target === agent.name);
  if (!isAsked && rng() < 0.5) {
    await lead
      .requestShutdown(agent.name, { reason: "wrap up?", timeoutSeconds: 10 })
      .then(() => (stats.leadShutdownRequests += 1))
      .catch(toleratePendingShutdown);
  }
}

/** Idle workers are asked to stop; stopped ones are started again while the soak runs. */
async function cycleWorkers(mayRespawn: boolean): Promise<void> {
  for (const running of supervisor?.runningWorkers() ?? []) {
    if (running.pid) workerPids.add(running.pid);
  }
  // Proves the /proc check used at the end sees live workers at all.
  stats.workersSeenInProc = Math.max(stats.workersSeenInProc, workerProcessesFor(node.url).length);
  await Promise.all(
    workerNames.map(async (name) => {
      const detail = await lead.call<{ status: string }>("GET", `/agents/${name}`);
      if (detail.status === "idle") {
        await lead
          .requestShutdown(name, { reason: "done for now", timeoutSeconds: 15 })
          .then(() => (stats.workerShutdownRequests += 1))
          .catch(toleratePendingShutdown);
      } else if (detail.status === "shutdown" || detail.status === "crashed") {
        // A stopped worker stays down a few seconds before the Lead starts it again: each start
        // is a new Node process, expensive on a small machine.
        const since = workerStoppedSince.get(name) ?? Date.now();
        workerStoppedSince.set(name, since);
        if (mayRespawn && Date.now() - since >= WORKER_REST_MS) {
          workerStoppedSince.delete(name);
          await registerWorker(name);
        }
      }
    }),
  );
}

async function registerWorker(name: string): Promise<void> {
  await lead.registerAgent({
    name,
    role: "soak worker",
    requirePlan: true,
    worker: { model: "scripted", script: WORKER_SCRIPT },
  });
  stats.workerSpawns += 1;
}

beforeAll(async () => {
  database = await createOwnDatabase(inject("adminDatabaseUrl"), "handshake_soak");
  db = database.db;
  let leadUser: Human;
  let viewer: Human;
  [node, leadUser, viewer] = await Promise.all([
    startApiNode({ databaseUrl: database.url, label: "soak" }),
    createHuman(db, "lead"),
    createHuman(db, "viewer"),
  ]);
  const { token } = await createApiToken(db, leadUser.userId, {
    name: "soak-lead",
    scope: "admin",
  });
  const supervisorToken = (
    await createApiToken(db, leadUser.userId, { name: "soak-supervisor", scope: "supervisor" })
  ).token;
  lead = new LeadApi(node.url, token);
  [viewerSession, leadSession] = await Promise.all([
    signIn(node.url, viewer),
    signIn(node.url, leadUser),
  ]);
  recorder = new ConsoleRecorder("console", node.url, viewerSession, 0);
  await recorder.ready();
  dataDir = await mkdtemp(path.join(tmpdir(), "handshake-soak-"));
  supervisor = new Supervisor({
    serverUrl: node.url,
    supervisorToken,
    dataDir,
    heartbeatMs: 1_000,
    pollIntervalMs: 200,
  });
  await supervisor.start();
  // Workers first: their processes start up while the HTTP agents register.
  await Promise.all(workerNames.map((name) => registerWorker(name)));
  agents.push(
    ...Array.from({ length: API_AGENTS }, (_, i) => new SoakAgent(`soak-agent-${i}`, SEED + i + 1)),
  );
  await Promise.all(agents.map((agent) => agent.register()));
}, 90_000);

afterAll(async () => {
  await supervisor?.stop();
  recorder?.close();
  await Promise.all(agents.flatMap((agent) => agent.waiters.map((waiter) => waiter.stop())));
  const nodeErrors = node?.serverErrors() ?? 0;
  const serverErrorDetails = node?.serverErrorDetails() ?? [];
  await node?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  await writeFigures("soak", {
    title: `Soak: ${API_AGENTS + WORKERS} agents for ${SOAK_SECONDS} s`,
    seconds: SOAK_SECONDS,
    ...figures,
    stats: { ...stats, unauthorizedByKind },
    serverErrors: stats.serverErrors + nodeErrors,
    serverErrorDetails,
  });
}, 60_000);

describe(`soak: ${API_AGENTS} HTTP agents + ${WORKERS} worker processes for ${SOAK_SECONDS} s`, () => {
  it(
    "ends with every request terminal, counts reconciled with the events log, nothing lost, no worker running",
    async () => {
      const startedAt = Date.now();
      const deadline = startedAt + SOAK_SECONDS * 1_000;
      let isLoadRunning = true;
      let isDrained = false;
      // A worker started in the last seconds would only lengthen the drain.
      const leadRun = leadLoop(
        () => isLoadRunning,
        () => isLoadRunning && deadline - Date.now() > 4_000,
        () => isDrained,
      );
      await Promise.all(agents.map((agent) => agent.run(deadline, agents)));
      isLoadRunning = false;
      const loadEndedAt = Date.now();
      // Every kind of unauthorized action once more per agent, against what the soak left behind.
      for (const agent of agents) {
        for (const kind of UNAUTHORIZED_KINDS) await agent.unauthorizedFlow(agents, kind);
      }

      // Drain: the Lead answers what is left, let-expire requests expire, workers are asked to stop.
      await waitUntil(
        "every request to reach a terminal state and every worker to stop",
        async () => {
          const pending = await db.request.count({ where: { status: "pending" } });
          const liveWorkers = await db.agent.count({
            where: { name: { in: workerNames }, status: { notIn: ["shutdown", "crashed"] } },
          });
          return pending === 0 && liveWorkers === 0 && supervisor?.runningWorkers().length === 0;
        },
        90_000,
        250,
      );
      isDrained = true;
      await leadRun;
      const drainMs = Date.now() - loadEndedAt;
      await sleep(500);

      // 1. Every request is terminal, and the requests table reconciles with the events log.
      const rows = await db.request.findMany();
      const byStatus: Record<string, number> = {};
      for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
      const eventCounts = Object.fromEntries(
        (
          await db.$queryRaw<{ kind: string; count: bigint }[]>`
          SELECT kind, count(*) AS count FROM events WHERE kind LIKE 'request.%' GROUP BY kind`
        ).map((row) => [row.kind, Number(row.count)]),
      ) as Record<string, number>;
      const perRequest = await db.$queryRaw<
        { id: string; created: bigint; terminal: bigint; kinds: string }[]
      >`
      SELECT r.id,
        count(*) FILTER (WHERE e.kind = 'request.created') AS created,
        count(*) FILTER (WHERE e.kind <> 'request.created') AS terminal,
        string_agg(e.kind, ',') AS kinds
      FROM requests r LEFT JOIN events e
        ON e.kind LIKE 'request.%' AND e.data->>'requestId' = r.id
      GROUP BY r.id`;
      const unreconciled = perRequest.filter(
        (row) => Number(row.created) !== 1 || Number(row.terminal) !== 1,
      );
      const statusOfEvent: Record<string, string[]> = {
        "request.decided": ["approved", "rejected"],
        "request.expired": ["expired"],
        "request.superseded": ["superseded"],
        "request.cancelled": ["cancelled"],
      };
      const count = (statuses: string[]) => statuses.reduce((s, k) => s + (byStatus[k] ?? 0), 0);

      // 2. What each client created exists, and nothing exists that no client created.
      const rowIds = new Set(rows.map((row) => row.id));
      const clientCreated = new Map<string, SoakAgent>();
      for (const agent of agents)
        for (const id of agent.created.keys()) clientCreated.set(id, agent);
      const missing = [...clientCreated.keys()].filter((id) => !rowIds.has(id));
      const apiAgentNames = new Set(agents.map((agent) => agent.name));
      const phantom = rows.filter(
        (row) =>
          row.sender !== "lead" && apiAgentNames.has(row.sender) && !clientCreated.has(row.id),
      );

      // 3. Every answer (decision or expiry) reached the agent that waited for it, exactly once;
      //    every Lead → agent shutdown and every plain message reached its agent exactly once,
      //    unless the server marked it not delivered: it was still unacknowledged when the
      //    incarnation it was sent to ended (this soak's clients never acknowledge).
      const undelivered = await db.message.findMany({
        where: { cancelledAt: { not: null } },
        select: { id: true, type: true, metadata: true },
      });
      const undeliveredIds = new Set(undelivered.map((message) => Number(message.id)));
      const undeliveredKeys = new Set(
        undelivered.map(
          (message) =>
            `${message.type}|${String((message.metadata as Record<string, unknown>).requestId)}`,
        ),
      );
      const lostAnswers: string[] = [];
      const duplicateAnswers: string[] = [];
      for (const row of rows) {
        const agent = agents.find(
          (a) => a.name === (row.target === "lead" ? row.sender : row.target),
        );
        if (!agent) continue;
        const isAnswered = ["approved", "rejected", "expired"].includes(row.status);
        const deliveredType = row.target === "lead" ? `${row.type}_response` : row.type;
        const expected = row.target === "lead" ? (isAnswered ? 1 : 0) : 1;
        const seen = agent.countOf(deliveredType, row.id);
        if (seen < expected && !undeliveredKeys.has(`${deliveredType}|${row.id}`))
          lostAnswers.push(`${row.id} (${row.type} ${row.status}) → ${agent.name}`);
        if (seen > 1) duplicateAnswers.push(row.id);
      }
      const lostMessages: number[] = [];
      const duplicateMessages: number[] = [];
      for (const [id, name] of messagesToAgents) {
        const seen = agents.find((agent) => agent.name === name)?.hasMessage(id) ?? 0;
        if (seen === 0 && !undeliveredIds.has(id)) lostMessages.push(id);
        if (seen > 1) duplicateMessages.push(id);
      }
      const redeliveries = agents.reduce(
        (sum, agent) =>
          sum +
          agent.waiters.reduce(
            (inner, waiter) => inner + [...waiter.deliveries.values()].filter((c) => c > 1).length,
            0,
          ),
        0,
      );
      // Inbox long-polls fail only with 401 after an incarnation was ended for the agent.
      const inboxErrors = agents.flatMap((agent) =>
        agent.waiters.flatMap((waiter) =>
          waiter.errors
            .filter((error) => !(error instanceof ApiError && error.status === 401))
            .map(String),
        ),
      );
      const messageRows = await db.message.count();
      const messageEvents = await db.event.count({ where: { kind: "message.sent" } });
      const plainMessageRows = await db.message.count({
        where: { type: "message", sender: { in: [...apiAgentNames, "lead"] } },
      });

      // 4. The console saw every request created and ended.
      const consoleMissing = rows.filter(
        (row) =>
          recorder.countOf("request.created", row.id) !== 1 ||
          ["request.decided", "request.expired", "request.superseded", "request.cancelled"].reduce(
            (sum, kind) => sum + recorder.countOf(kind, row.id),
            0,
          ) !== 1,
      );

      // 5. No worker process is left.
      for (const running of supervisor?.runningWorkers() ?? []) {
        if (running.pid) workerPids.add(running.pid);
      }
      const strays = workerProcessesFor(node.url);
      const alive = [...workerPids].filter((pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      });

      Object.assign(figures, {
        lostDetails: [
          ...missing.map((id) => `created but not stored: ${id}`),
          ...lostAnswers,
          ...lostMessages.map((id) => `message ${id}`),
          ...consoleMissing.map((row) => `console: ${row.id}`),
        ].slice(0, 20),
        cases: rows.length,
        requests: rows.length,
        byStatus,
        events: eventCounts,
        reconciled:
          unreconciled.length === 0 &&
          eventCounts["request.created"] === rows.length &&
          Object.entries(statusOfEvent).every(
            ([kind, statuses]) => (eventCounts[kind] ?? 0) === count(statuses),
          ),
        lost: missing.length + lostAnswers.length + lostMessages.length + consoleMissing.length,
        duplicates: duplicateAnswers.length + duplicateMessages.length + redeliveries,
        unauthorizedAttempts: stats.unauthorizedAttempts,
        unauthorizedSucceeded: stats.unauthorizedSucceeded,
        messages: {
          rows: messageRows,
          events: messageEvents,
          plainSent: plainMessagesFromClients,
          notDelivered: undeliveredIds.size,
        },
        workers: {
          spawns: stats.workerSpawns,
          processesSeen: workerPids.size,
          leftRunning:
            new Set([...alive, ...strays]).size + (supervisor?.runningWorkers().length ?? 0),
        },
        drainMs,
      });

      expect(stats.unexpectedErrors).toEqual([]);
      expect(byStatus.pending ?? 0).toBe(0);
      expect(unreconciled).toEqual([]);
      expect(eventCounts["request.created"]).toBe(rows.length);
      for (const [kind, statuses] of Object.entries(statusOfEvent)) {
        expect(eventCounts[kind] ?? 0, kind).toBe(count(statuses));
      }
      expect(missing).toEqual([]);
      expect(phantom.map((row) => row.id)).toEqual([]);
      expect(lostAnswers).toEqual([]);
      expect(duplicateAnswers).toEqual([]);
      expect(lostMessages).toEqual([]);
      expect(duplicateMessages).toEqual([]);
      expect(redeliveries).toBe(0);
      expect(inboxErrors).toEqual([]);
      expect(messageEvents).toBe(messageRows);
      expect(plainMessageRows).toBe(plainMessagesFromClients);
      expect(consoleMissing.map((row) => row.id)).toEqual([]);
      expect(stats.unauthorizedSucceeded).toBe(0);
      expect(stats.serverErrors + node.serverErrors()).toBe(0);
      expect(alive).toEqual([]);
      expect(strays).toEqual([]);
      if (existsSync("/proc")) expect(stats.workersSeenInProc).toBeGreaterThan(0);
      expect(stats.workerSpawns).toBeGreaterThanOrEqual(WORKERS);
      // The soak exercised every terminal state it is meant to (a 10-second run may miss expiries).
      expect(byStatus.approved ?? 0).toBeGreaterThan(0);
      expect(byStatus.rejected ?? 0).toBeGreaterThan(0);
      expect(byStatus.cancelled ?? 0).toBeGreaterThan(0);
      if (SOAK_SECONDS >= 60) {
        expect(byStatus.expired ?? 0).toBeGreaterThan(0);
        expect(byStatus.superseded ?? 0).toBeGreaterThan(0);
      }
    },
    (SOAK_SECONDS + 150) * 1_000,
  );
});
