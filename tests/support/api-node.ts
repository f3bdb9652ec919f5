import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { childProcessEnv } from "../../lib/env";

/** The line tests/support/run-api-node.ts prints once it accepts connections. */
export const READY_PREFIX = "Handshake API node: ";

const ENTRY = path.resolve(import.meta.dirname, "run-api-node.ts");
const SKEWED_CLOCK = path.resolve(import.meta.dirname, "skewed-clock.mjs");
const ROOT = path.resolve(import.meta.dirname, "../..");
const START_TIMEOUT_MS = 30_000;
/** What a node prints for an answer of 500: defineRoute's log, or the router's around a route. */
const SERVER_ERROR = /\[api\] unexpected error/g;

export type ApiNode = {
  label: string;
  url: string;
  port: number;
  pid: number;
  /** Everything the process printed, for failure messages and 5xx counts. */
  output: () => string;
  /** Requests the node answered with a 500 (each is logged, by defineRoute or the router). */
  serverErrors: () => number;
  /** The first few of those, with the lines that followed (the error and its stack). */
  serverErrorDetails: () => string[];
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  isRunning: () => boolean;
  /** kill -9: no shutdown hook runs, open connections are reset. */
  crash: () => Promise<void>;
  /** SIGTERM and wait (SIGKILL after a grace period). */
  stop: () => Promise<void>;
};

const running = new Set<ChildProcess>();
// Last resort if a test file dies without its afterAll: never leave a node process behind.
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** A free loopback port (the node binds it itself; the small race is acceptable in tests). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts one web node (tests/support/run-api-node.ts) as its own OS process on `port` (a fresh free
 * port by default) against `databaseUrl`, and waits until it listens.
 */
export async function startApiNode(options: {
  databaseUrl: string;
  label: string;
  port?: number;
  /** Echo the node's output to this process's stdout (always kept for failure messages). */
  isVerbose?: boolean;
  /** Node's own flags, before tsx (`--inspect=127.0.0.1:0`, …). */
  nodeArgs?: string[];
  /** Runs the node with its clock this far off the machine's (tests/support/skewed-clock.mjs). */
  clockSkewMs?: number;
}): Promise<ApiNode> {
  const port = options.port ?? (await freePort());
  const skew: { args: string[]; env: Record<string, string> } =
    options.clockSkewMs === undefined
      ? { args: [], env: {} }
      : {
          args: ["--import", SKEWED_CLOCK],
          env: { HANDSHAKE_TEST_CLOCK_SKEW_MS: String(options.clockSkewMs) },
        };
  const nodeArgs = [...(options.nodeArgs ?? []), ...skew.args, "--import", "tsx", ENTRY];
  const child = spawn(process.execPath, nodeArgs, {
    cwd: ROOT,
    env: childProcessEnv({
      DATABASE_URL: options.databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      ...skew.env,
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const ready = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      if (options.isVerbose) {
        for (const line of text.split("\n").filter(Boolean))
          console.log(`[node ${options.label}] ${line}`);
      }
      const match = new RegExp(`${READY_PREFIX}(\\S+)`).exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then(({ code, signal }) =>
      reject(
        new Error(
          `node ${options.label} exited during start-up (${signal ?? code}):\n${output.slice(-4_000)}`,
        ),
      ),
    );
    setTimeout(
      () => reject(new Error(`node ${options.label} did not start in time:\n${output}`)),
      START_TIMEOUT_MS,
    ).unref();
  });
  let url: string;
  try {
    url = await ready;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  const isRunning = () => child.exitCode === null && child.signalCode === null;
  const terminate = async (signal: NodeJS.Signals) => {
    if (!isRunning()) return;
    child.kill(signal);
    const grace = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(grace);
  };
  return {
    label: options.label,
    url,
    port,
    pid: child.pid ?? 0,
    output: () => output,
    serverErrors: () => output.match(SERVER_ERROR)?.length ?? 0,
    serverErrorDetails: () => {
      const lines = output.split("\n");
      return lines
        .flatMap((line, index) =>
          new RegExp(SERVER_ERROR.source).test(line)
            ? [lines.slice(index, index + 6).join("\n")]
            : [],
        )
        .slice(0, 5);
    },
    exited,
    isRunning,
    crash: () => terminate("SIGKILL"),
    stop: () => terminate("SIGTERM"),
  };
}
