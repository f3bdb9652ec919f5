import { readFileSync } from "node:fs";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_COMMAND_LENGTH, MAX_STREAM_BYTES, runBash } from "./bash-tool";
import { createHarness, type Harness } from "./test-support";

let harness: Harness;
let leftovers: number[] = [];

beforeEach(async () => {
  harness = await createHarness();
  leftovers = [];
});

afterEach(async () => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone, which is what the test hoped for.
    }
  }
  await harness.cleanup();
});

/**
 * Alive means running: a killed child awaiting its reaper (a zombie) counts as dead. Callers poll,
 * because a SIGKILLed process closes its pipes a moment before it turns into a zombie.
 */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function readPid(name: string): Promise<number> {
  const pid = Number((await readFile(path.join(harness.workspace, name), "utf8")).trim());
  leftovers.push(pid);
  return pid;
}

describe("bash", () => {
  it("returns the exit code, stdout and stderr", async () => {
    const result = await harness.call("bash", { command: "echo out; echo err >&2; exit 3" });
    expect(result).toMatchObject({
      isError: false,
      content: "exit code 3\n--- stdout ---\nout\n\n--- stderr ---\nerr\n",
    });
  });

  it("runs in the workspace, with the workspace as HOME", async () => {
    const { content } = await harness.call("bash", { command: 'pwd; echo "$HOME"' });
    const workspace = await realpath(harness.workspace);
    expect(content).toBe(`exit code 0\n--- stdout ---\n${workspace}\n${harness.workspace}\n`);
  });

  it("inherits nothing from the worker's environment", async () => {
    process.env.HANDSHAKE_TEST_SECRET = "tools-test-secret-value";
    process.env.DATABASE_URL ??= "postgresql://user:password@localhost/db";
    try {
      const outcome = await runBash("env", { workspace: harness.workspace, timeoutSeconds: 10 });
      expect(outcome.stdout).not.toContain("tools-test-secret-value");
      expect(outcome.stdout).not.toContain("HANDSHAKE_");
      expect(outcome.stdout).not.toContain("DATABASE_URL");
      expect(outcome.stdout).not.toContain(process.env.DATABASE_URL);
      const names = outcome.stdout
        .trim()
        .split("\n")
        .map((line) => line.slice(0, line.indexOf("=")));
      // SHLVL and _ are set by bash itself.
      expect(new Set(names)).toEqual(new Set(["PATH", "HOME", "LANG", "PWD", "SHLVL", "_"]));
      expect(outcome.stdout).toContain("PATH=/usr/local/bin:/usr/bin:/bin\n");
    } finally {
      delete process.env.HANDSHAKE_TEST_SECRET;
    }
  });

  it("kills a command, and the background child it started, at the timeout", async () => {
    const started = Date.now();
    const outcome = await runBash("sleep 100 & echo $! > child.pid; sleep 100", {
      workspace: harness.workspace,
      timeoutSeconds: 1,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome.isTimedOut).toBe(true);
    const child = await readPid("child.pid");
    await expect.poll(() => isAlive(child), { timeout: 2_000 }).toBe(false);
  });

  it("says so when a call times out", async () => {
    const result = await harness.call("bash", {
      command: "echo begun; sleep 100",
      timeoutSeconds: 1,
    });
    expect(result.content).toBe(
      "timed out after 1s; the command and its process group were killed\n--- stdout ---\nbegun\n",
    );
  });

  it("kills background jobs left behind when the command ends", async () => {
    const started = Date.now();
    const outcome = await runBash("sleep 100 & echo $! > child.pid; echo done", {
      workspace: harness.workspace,
      timeoutSeconds: 30,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome).toMatchObject({ exitCode: 0, isTimedOut: false, stdout: "done\n" });
    const child = await readPid("child.pid");
    await expect.poll(() => isAlive(child), { timeout: 2_000 }).toBe(false);
  });

  it("stops waiting at the timeout for an escaped process holding the pipes", async () => {
    const started = Date.now();
    // The pause lets setsid take effect before the command ends and its group is killed.
    const outcome = await runBash(
      "setsid sleep 100 & echo $! > escaped.pid; sleep 0.5; echo done",
      {
        workspace: harness.workspace,
        timeoutSeconds: 1,
      },
    );
    const escaped = await readPid("escaped.pid");
    expect(isAlive(escaped)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome).toMatchObject({ isTimedOut: true, stdout: "done\n" });
  });

  it("caps each stream and keeps draining", async () => {
    const outcome = await runBash(
      "head -c 1000000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2",
      { workspace: harness.workspace, timeoutSeconds: 30 },
    );
    expect(outcome.exitCode).toBe(0);
    expect(outcome.stdout).toBe(`${"o".repeat(MAX_STREAM_BYTES)}\n[truncated]`);
    expect(outcome.stderr).toBe(`${"e".repeat(MAX_STREAM_BYTES)}\n[truncated]`);
  });

  it.each([
    [{ command: "" }, "command"],
    [{ command: "x".repeat(MAX_COMMAND_LENGTH + 1) }, "command"],
    [{ command: "true", timeoutSeconds: 0 }, "timeoutSeconds"],
    [{ command: "true", timeoutSeconds: 121 }, "timeoutSeconds"],
  ])("refuses invalid arguments %#", async (args, field) => {
    const result = await harness.call("bash", args);
    expect(result.isError).toBe(true);
    expect(result.content).toContain(`${field}: `);
    expect(harness.client.calls).toEqual([]);
  });
});
