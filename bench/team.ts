import http from "node:http";
import { now, sleep } from "./stats";

/**
 * The issue's own scene: a team of agents, each making one gate call a second, from one node.
 * Open loop: each call is sent when its turn comes whether or not the calls before it have
 * answered, and timed from that turn, so a server that falls behind shows its queue in the
 * latencies instead of slowing the load down (as the closed loops of G3.3 and the gate do).
 * Each agent keeps one connection of its own, as separate agent processes do: the server holds
 * the whole team's sockets, not a handful shared by a pool.
 */
export type TeamCall = {
  /** The path on the server, `/api/v1/tool-calls` for Handshake. */
  path: string;
  body: string;
  /** The agent's bearer token; none for the plain floor, which authenticates nothing. */
  tokenOf?: (agent: number) => string;
  /** An answer that is not what is measured (a verdict that did not allow) is an error. */
  isAnswerRight?: (body: Buffer) => boolean;
};

export type TeamLoad = {
  agents: number;
  seconds: number;
  /** Per answered call: answer received minus the call's turn, in milliseconds. */
  latenciesMs: number[];
  /** The same, of each agent's first call, which opens its connection. */
  firstCallsMs: number[];
  /** Per call: when it was sent minus its turn; the bench's own delay, part of every latency. */
  sendLagMs: number[];
  /** Answered calls a second over the round's seconds: `agents` when none failed. */
  answeredPerSecond: number;
  errors: number;
};

/** How often the sender looks for calls whose turn has come. */
const TICK_MS = 1;

export async function measureTeamLoad(options: {
  baseUrl: string;
  agents: number;
  /** Each agent makes one call a second for this long. */
  seconds: number;
  call: TeamCall;
  timeoutMs?: number;
}): Promise<TeamLoad> {
  const { agents, seconds, call } = options;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const connections = Array.from(
    { length: agents },
    () => new http.Agent({ keepAlive: true, maxSockets: 1 }),
  );
  const latenciesMs: number[] = [];
  const firstCallsMs: number[] = [];
  const sendLagMs: number[] = [];
  let errors = 0;
  const fail = (reason: unknown) => {
    errors += 1;
    if (errors <= 3) console.error("[bench] team call failed", reason);
  };

  const send = (agent: number, turn: number, isFirst: boolean): Promise<void> =>
    new Promise<void>((resolve) => {
      // A timeout after the answer began fails both the request and the response: count it once.
      let isSettled = false;
      const settle = (outcome: () => void) => {
        if (isSettled) return;
        isSettled = true;
        outcome();
        resolve();
      };
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(call.body)),
      };
      const token = call.tokenOf?.(agent);
      if (token) headers.authorization = `Bearer ${token}`;
      const request = http.request(
        `${options.baseUrl}${call.path}`,
        { method: "POST", headers, agent: connections[agent], timeout: timeoutMs },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            settle(() => {
              const body = Buffer.concat(chunks);
              if (response.statusCode !== 200) fail(`HTTP ${response.statusCode}: ${String(body)}`);
              else if (call.isAnswerRight && !call.isAnswerRight(body)) {
                fail(`not the answer measured: ${String(body)}`);
              } else {
                const latencyMs = now() - turn;
                latenciesMs.push(latencyMs);
                if (isFirst) firstCallsMs.push(latencyMs);
              }
            }),
          );
          response.on("error", (error) => settle(() => fail(error)));
        },
      );
      request.on("timeout", () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      request.on("error", (error) => settle(() => fail(error)));
      request.end(call.body);
      sendLagMs.push(now() - turn);
    });

  // The team's turns spread evenly over each second: agent i calls at i/agents of it.
  const total = agents * seconds;
  const spacingMs = 1000 / agents;
  const startedAt = now() + 50;
  const pending: Promise<void>[] = [];
  let next = 0;
  try {
    while (next < total) {
      const at = now();
      for (; next < total && startedAt + next * spacingMs <= at; next++) {
        pending.push(send(next % agents, startedAt + next * spacingMs, next < agents));
      }
      await sleep(TICK_MS);
    }
    await Promise.all(pending);
  } finally {
    for (const connection of connections) connection.destroy();
  }
  return {
    agents,
    seconds,
    latenciesMs,
    firstCallsMs,
    sendLagMs,
    answeredPerSecond: latenciesMs.length / seconds,
    errors,
  };
}
