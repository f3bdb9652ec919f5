import { spawn } from "node:child_process";
import { childProcessEnv } from "../lib/env";
import { assertPortFree } from "../scripts/product-processes";
import type { Agent } from "./clients";
import { watchInspector, type InspectedProcess } from "./inspector";
import { readProcessCpuSeconds } from "./machine-cpu";
import { startLongPolls } from "./handshake";
import { perLongPollKiB, readCollectedMemory, readProcessRssMiB, rssPerLongPollKiB } from "./rss";
import { now, sleep } from "./stats";

/** What one side (the plain floor or Handshake) did under `clients` keep-alive clients. */
export type LoadResult = { latenciesMs: number[]; perSecond: number; errors: number };

/**
 * `clients` workers, each sending its next call as soon as the last one answers, for `durationMs`.
 * fetch keeps connections alive, so this measures requests, not TCP handshakes.
 */
export async function measureLoad(options: {
  clients: number;
  durationMs: number;
  call: (worker: number) => Promise<Response>;
  /** An answer that is not what the side measures (a verdict that did not allow) is an error. */
  isAnswerRight?: (body: ArrayBuffer) => boolean;
}): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  const startedAt = now();
  const deadline = startedAt + options.durationMs;
  await Promise.all(
    Array.from({ length: options.clients }, async (_, worker) => {
      while (now() < deadline) {
        const sentAt = now();
        try {
          const response = await options.call(worker);
          const body = await response.arrayBuffer();
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          if (options.isAnswerRight && !options.isAnswerRight(body)) {
            throw new Error(`not the answer measured: ${Buffer.from(body).toString("utf8")}`);
          }
          latenciesMs.push(now() - sentAt);
        } catch (error) {
          errors += 1;
          if (errors <= 3) console.error("[bench] gate call failed", error);
        }
      }
    }),
  );
  const elapsedS = (now() - startedAt) / 1000;
  return { latenciesMs, perSecond: latenciesMs.length / elapsedS, errors };
}

/** The read-only call the gate allows without a plan and records before it answers. */
export const ALLOWED_TOOL_CALL = { tool: "read_file", args: { path: "README.md" } };

/**
 * A call that needs the Lead's card (git push) which an allow rule lets through: the gate parses
 * it, matches the rules and writes the rule's approval besides the attempt (issue 15).
 */
export const RULE_ALLOWED_TOOL_CALL = { tool: "bash", args: { command: "git push origin main" } };

/**
 * The allow rule for the agents the bench's token registers. Scoped to that token: a role names
 * no agent a token registered (decision 077), so a role-scoped rule left every call a card.
 */
export function ruleForBench(tokenId: string) {
  return {
    pattern: "bash(git push origin main)",
    effect: "allow",
    scope: { kind: "token", tokenId },
  };
}

/** A verdict side measures allowed calls only: a refusal or a card is not the path measured. */
export function isAllowedVerdict(body: ArrayBuffer | Uint8Array): boolean {
  try {
    return (JSON.parse(new TextDecoder().decode(body)) as { allowed?: unknown }).allowed === true;
  } catch {
    return false;
  }
}

export function gateVerdictCall(
  baseUrl: string,
  agents: Agent[],
  call: { tool: string; args: Record<string, unknown> } = ALLOWED_TOOL_CALL,
) {
  return (worker: number) =>
    fetch(`${baseUrl}/api/v1/tool-calls`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${agents[worker % agents.length]?.token ?? ""}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(call),
    });
}

export function plainCall(baseUrl: string, path: "/tool-calls" | "/health") {
  return () =>
    path === "/health"
      ? fetch(`${baseUrl}/health`)
      : fetch(`${baseUrl}/tool-calls`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(ALLOWED_TOOL_CALL),
        });
}

export function healthCall(baseUrl: string) {
  return () => fetch(`${baseUrl}/api/v1/health`);
}

export type PlainServer = {
  url: string;
  stop: () => Promise<void>;
  readCpuSeconds: () => Promise<number>;
  readRssMiB: () => Promise<number>;
} & InspectedProcess;

/** Starts bench/plain-server.ts as its own process and waits until it answers. */
export async function startPlainServer(options: {
  databaseUrl: string;
  port: number;
}): Promise<PlainServer> {
  await assertPortFree("127.0.0.1", options.port);
  const child = spawn(
    process.execPath,
    ["--inspect=127.0.0.1:0", "--import", "tsx", "bench/plain-server.ts"],
    {
      stdio: ["ignore", "inherit", "pipe"],
      env: childProcessEnv({ DATABASE_URL: options.databaseUrl, PORT: String(options.port) }),
    },
  );
  const inspector = watchInspector(child.stderr, "the plain server");
  // Its errors still reach the bench's output; the inspector's banner does not.
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8").replace(/^(Debugger |For help, see:).*\n/gm, "");
    if (text !== "") process.stderr.write(text);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  const server: PlainServer = {
    url,
    stop,
    readCpuSeconds: () => readProcessCpuSeconds(child.pid),
    readRssMiB: () => readProcessRssMiB(child.pid),
    ...inspector,
  };
  for (let attempt = 0; ; attempt++) {
    const isUp = await fetch(`${url}/health`)
      .then((response) => response.ok)
      .catch(() => false);
    if (isUp) return server;
    if (attempt > 120 || child.exitCode !== null) {
      await stop();
      throw new Error("the plain floor server did not start");
    }
    await sleep(250);
  }
}

/**
 * G3.4's memory per long-poll, measured on the plain server the way the scale phase measures
 * Handshake's: every agent's long-poll open and settled into its wait, a full collection, heap and
 * RSS settled; then the long-polls closed, a collection, both read idle. What a `node:http` server
 * needs to hold an open request at all, which no change to Handshake can go below.
 */
export async function measurePlainLongPolls(options: {
  databaseUrl: string;
  port: number;
  agents: Agent[];
  afterMessage: number;
}): Promise<{ longPolls: number; rssPerLongPollKiB: number; heapPerLongPollKiB: number }> {
  const plain = await startPlainServer({ databaseUrl: options.databaseUrl, port: options.port });
  try {
    const longPolls = startLongPolls(plain.url, options.agents, options.afterMessage);
    await sleep(5_000);
    const inFlight = longPolls.inFlight();
    if (inFlight !== options.agents.length) {
      throw new Error(
        `${inFlight} of ${options.agents.length} long-polls reached the plain server`,
      );
    }
    const withLongPolls = await readCollectedMemory(plain);
    await longPolls.stop();
    await sleep(2_000);
    const idle = await readCollectedMemory(plain);
    return {
      longPolls: inFlight,
      rssPerLongPollKiB: rssPerLongPollKiB({
        idleMiB: idle.rssReadings,
        withLongPollsMiB: withLongPolls.rssReadings,
        longPolls: inFlight,
      }),
      heapPerLongPollKiB: perLongPollKiB(withLongPolls.heapMiB - idle.heapMiB, inFlight),
    };
  } finally {
    await plain.stop();
  }
}
