import { spawn } from "node:child_process";
import { childProcessEnv } from "../lib/env";
import type { Agent } from "./clients";
import { readProcessCpuSeconds } from "./machine-cpu";
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
          await response.arrayBuffer();
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
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
export const RULE_FOR_BENCH = {
  pattern: "bash(git push origin main)",
  effect: "allow",
  scope: { kind: "role", role: "bench" },
};

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

/** Starts bench/plain-server.ts as its own process and waits until it answers. */
export async function startPlainServer(options: {
  databaseUrl: string;
  port: number;
}): Promise<{ url: string; stop: () => Promise<void>; readCpuSeconds: () => Promise<number> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/plain-server.ts"], {
    stdio: ["ignore", "inherit", "inherit"],
    env: childProcessEnv({ DATABASE_URL: options.databaseUrl, PORT: String(options.port) }),
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  for (let attempt = 0; ; attempt++) {
    const isUp = await fetch(`${url}/health`)
      .then((response) => response.ok)
      .catch(() => false);
    const readCpuSeconds = () => readProcessCpuSeconds(child.pid);
    if (isUp) return { url, stop, readCpuSeconds };
    if (attempt > 120 || child.exitCode !== null) {
      await stop();
      throw new Error("the plain floor server did not start");
    }
    await sleep(250);
  }
}
