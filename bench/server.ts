import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { watchInspector, type InspectedProcess } from "./inspector";
import { readProcessRssMiB } from "./rss";
import { readProcessCpuSeconds } from "./machine-cpu";
import { childProcessEnv } from "../lib/env";
import { readBuildState } from "../scripts/build-if-needed";
import { assertPortFree, waitForHealth } from "../scripts/product-processes";
import { SERVER_NODE_ARGS } from "../scripts/server-command";

export const BENCH_DIST_DIR = ".next-bench";
/** The per-agent limits the bench's server runs with (lib/agents/limits.ts). */
const BENCH_AGENT_CALLS_PER_MINUTE = 1_000_000;

/**
 * A checkout's server as that checkout starts it: the baseline is measured as it ran, with the
 * arguments of its own scripts/server-command.ts, or without any before that file existed.
 */
async function serverNodeArgsOf(checkout: string | undefined): Promise<readonly string[]> {
  if (!checkout) return SERVER_NODE_ARGS;
  const named = path.join(checkout, "scripts/server-command.ts");
  if (!existsSync(named)) return ["--import", "tsx", "server.ts"];
  const own = (await import(pathToFileURL(named).href)) as { SERVER_NODE_ARGS: string[] };
  return own.SERVER_NODE_ARGS;
}

/**
 * `next build` into the bench's own folder when it has none, when a source is newer than it (the
 * routes would be stale while server.ts runs lib/ from source) or with BENCH_REBUILD=1. Its own
 * folder, so the bench never races another checkout's `.next`. Next rewrites tsconfig.json while
 * building; the file is put back byte for byte.
 */
export function ensureBuild(options: { isForced: boolean }): { isBuilt: boolean } {
  const state = readBuildState(BENCH_DIST_DIR);
  const isStale = state === "stale";
  if (state === "current" && !options.isForced) return { isBuilt: false };
  console.log(
    `[bench] next build into ${BENCH_DIST_DIR} (${options.isForced ? "BENCH_REBUILD=1" : isStale ? "sources changed since the last build" : "no build yet"}) …`,
  );
  const tsconfig = readFileSync("tsconfig.json");
  try {
    const result = spawnSync("npx", ["next", "build"], {
      stdio: ["ignore", "inherit", "inherit"],
      env: childProcessEnv({
        HANDSHAKE_NEXT_DIST_DIR: BENCH_DIST_DIR,
        NEXT_TELEMETRY_DISABLED: "1",
      }),
    });
    if (result.status !== 0) throw new Error(`next build failed (exit ${result.status})`);
  } finally {
    writeFileSync("tsconfig.json", tsconfig);
  }
  return { isBuilt: true };
}

export type RunningServer = {
  url: string;
  pid: number;
  logFile: string;
  /** VmRSS of the server process in MiB. */
  readRssMiB(): Promise<number>;
  /** CPU time (user + system) the server process has used so far, in seconds. */
  readCpuSeconds(): Promise<number>;
  stop(): Promise<void>;
} & InspectedProcess;

/**
 * The real production server (server.ts: Next, socket.io, the LISTEN bridge, the sweeper) on a
 * scratch database, seeded with a Lead through HANDSHAKE_ADMIN_EMAIL/PASSWORD, as e2e does.
 */
export async function startServer(options: {
  databaseUrl: string;
  port: number;
  secret: string;
  admin: { email: string; password: string };
  logFile: string;
  /** Serve another checkout's server.ts (the baseline); this one by default. */
  cwd?: string | undefined;
}): Promise<RunningServer> {
  await assertPortFree("127.0.0.1", options.port);
  const log = createWriteStream(options.logFile);
  const nodeArgs = [
    // Loopback, a free port: the bench collects garbage before its RSS readings through it, and
    // profiles the hot paths' phases (BENCH_CPU_PROF).
    "--inspect=127.0.0.1:0",
    ...(await serverNodeArgsOf(options.cwd)),
  ];
  const child: ChildProcess = spawn(process.execPath, nodeArgs, {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: childProcessEnv({
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      HANDSHAKE_NEXT_DIST_DIR: BENCH_DIST_DIR,
      DATABASE_URL: options.databaseUrl,
      HOST: "127.0.0.1",
      PORT: String(options.port),
      HANDSHAKE_SECRET: options.secret,
      HANDSHAKE_ADMIN_EMAIL: options.admin.email,
      HANDSHAKE_ADMIN_PASSWORD: options.admin.password,
      // Counted as always, never reached: the gate's eight agents call as fast as the node
      // answers, which on a quiet machine passed the default of 6,000 tool calls a minute each.
      HANDSHAKE_AGENT_TOOL_CALLS_PER_MINUTE: String(BENCH_AGENT_CALLS_PER_MINUTE),
      HANDSHAKE_AGENT_REQUESTS_PER_MINUTE: String(BENCH_AGENT_CALLS_PER_MINUTE),
      HANDSHAKE_AGENT_MESSAGES_PER_MINUTE: String(BENCH_AGENT_CALLS_PER_MINUTE),
    }),
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const inspector = watchInspector(child.stderr, "the server");
  const exited = new Promise<number>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
    }
    await new Promise<void>((resolve) => log.end(resolve));
  };
  try {
    await Promise.race([
      waitForHealth(url, exited),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("server not healthy after 60 s")), 60_000).unref(),
      ),
    ]);
  } catch (error) {
    await stop();
    const tail = (await readFile(options.logFile, "utf8").catch(() => "")).slice(-3_000);
    throw new Error(`${(error as Error).message}\n--- server log (tail) ---\n${tail}`);
  }
  return {
    url,
    pid: child.pid ?? -1,
    logFile: options.logFile,
    readRssMiB: () => readProcessRssMiB(child.pid),
    async readCpuSeconds() {
      return readProcessCpuSeconds(child.pid);
    },
    ...inspector,
    stop,
  };
}
