import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { z } from "zod";
import { defineTool } from "./tool-definition";

export const MAX_COMMAND_LENGTH = 10_000;
export const MAX_STREAM_BYTES = 64 * 1024;
const SAFE_PATH = "/usr/local/bin:/usr/bin:/bin";
const PIPE_GRACE_MS = 500;

export type BashOutcome = {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  isTimedOut: boolean;
  stdout: string;
  stderr: string;
};

/** Keeps the first `limit` bytes of a stream but drains the rest, so the writer never blocks. */
function captureStream(stream: Readable, limit: number): () => string {
  const chunks: Buffer[] = [];
  let kept = 0;
  let isTruncated = false;
  stream.on("data", (chunk: Buffer) => {
    const room = limit - kept;
    if (chunk.length > room) isTruncated = true;
    if (room <= 0) return;
    const part = chunk.subarray(0, room);
    chunks.push(part);
    kept += part.length;
  });
  return () => Buffer.concat(chunks).toString("utf8") + (isTruncated ? "\n[truncated]" : "");
}

/** Best effort by nature: ESRCH (the group is already gone) is the usual failure, and harmless. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Throwing here would crash the worker from inside a timer; there is nothing better to do.
  }
}

/**
 * Runs a command with `/bin/bash -c` in the workspace. The environment is built from scratch, never
 * inherited: the worker holds the agent's token and the server's secrets, and a command must not
 * be able to print them. The command leads its own process group, so a timeout, and the end of
 * the command itself, take down everything it started: nothing outlives the call that was approved.
 */
export function runBash(
  command: string,
  options: { workspace: string; timeoutSeconds: number },
): Promise<BashOutcome> {
  const env: Record<string, string> = {
    PATH: SAFE_PATH,
    HOME: options.workspace,
    LANG: "C.UTF-8",
    PWD: options.workspace,
  };
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", ["-c", command], {
      cwd: options.workspace,
      // The cast only answers Next's typing, which makes NODE_ENV mandatory; the child gets none.
      env: env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const readStdout = captureStream(child.stdout, MAX_STREAM_BYTES);
    const readStderr = captureStream(child.stderr, MAX_STREAM_BYTES);
    let isTimedOut = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      isTimedOut = true;
      if (child.pid !== undefined) killGroup(child.pid);
      // A process that left the group (setsid) can still hold the pipes; stop waiting for it.
      graceTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, PIPE_GRACE_MS);
    }, options.timeoutSeconds * 1000);
    const clearTimers = () => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
    };

    child.on("error", (error) => {
      clearTimers();
      reject(error);
    });
    // Background jobs share the group and may hold the pipes open; killing the group on exit lets
    // "close" arrive instead of waiting for them.
    child.on("exit", () => {
      if (child.pid !== undefined) killGroup(child.pid);
    });
    child.on("close", (exitCode, signal) => {
      clearTimers();
      resolve({ exitCode, signal, isTimedOut, stdout: readStdout(), stderr: readStderr() });
    });
  });
}

function formatOutcome(outcome: BashOutcome, timeoutSeconds: number): string {
  const status = outcome.isTimedOut
    ? `timed out after ${timeoutSeconds}s; the command and its process group were killed`
    : outcome.exitCode === null
      ? `killed by ${outcome.signal ?? "a signal"}`
      : `exit code ${outcome.exitCode}`;
  const sections = [status];
  if (outcome.stdout) sections.push(`--- stdout ---\n${outcome.stdout}`);
  if (outcome.stderr) sections.push(`--- stderr ---\n${outcome.stderr}`);
  return sections.join("\n");
}

export const bashTool = defineTool({
  name: "bash",
  description:
    "Run a shell command with /bin/bash in your workspace and return its exit code, stdout and " +
    `stderr (each capped at ${MAX_STREAM_BYTES / 1024} KiB). The environment is minimal: no ` +
    "credentials, HOME is the workspace. Background processes are killed when the command ends.",
  argsSchema: z.strictObject({
    command: z.string().min(1).max(MAX_COMMAND_LENGTH),
    timeoutSeconds: z.number().int().min(1).max(120).default(30),
  }),
  run: async (args, context) => {
    const outcome = await runBash(args.command, {
      workspace: context.workspace,
      timeoutSeconds: args.timeoutSeconds,
    });
    return formatOutcome(outcome, args.timeoutSeconds);
  },
});
