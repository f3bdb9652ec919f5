import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import pg from "pg";
import { becomes, isAlive } from "../tests/support/processes";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { describeTestStall } from "./stall-details";
import { processTree, runWatched } from "./watched-run";

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

function captured() {
  const output = new PassThrough();
  let text = "";
  output.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { output, text: () => text };
}

describe("a watched run", () => {
  it("passes its output through and keeps going while it prints, however long it runs", async () => {
    const { output, text } = captured();
    const run = await runWatched(
      "sh",
      ["-c", "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.5; done; exit 3"],
      { env: process.env, stallAfterMs: 2_000, output },
    );
    expect(run).toEqual({ status: 3, signal: null, stall: null });
    expect(text()).toContain("line 1\n");
    expect(text()).toContain("line 6\n");
  });

  it("is no stall when it ends on its own while it is being described", async () => {
    const { output } = captured();
    const run = await runWatched("sh", ["-c", "sleep 1; exit 4"], {
      env: process.env,
      stallAfterMs: 300,
      output,
      describe: () => new Promise((resolve) => setTimeout(() => resolve("slow"), 2_000)),
    });
    expect(run).toEqual({ status: 4, signal: null, stall: null });
  });

  it("is killed with what it started once it prints nothing, after it was described", async () => {
    const { output, text } = captured();
    let described: number[] = [];
    const run = await runWatched("sh", ["-c", "sleep 600 & echo sleeper $!; wait"], {
      env: process.env,
      stallAfterMs: 500,
      output,
      describe: (processes) => {
        described = processes.map((found) => found.pid);
        return Promise.resolve("what it waits on");
      },
    });
    const sleeper = Number(/sleeper (\d+)/.exec(text())?.[1]);
    leftovers.push(sleeper);
    expect(run.signal).toBe("SIGKILL");
    expect(run.stall?.quietMs).toBeGreaterThanOrEqual(500);
    expect(run.stall?.details).toBe("what it waits on");
    const sleeping = run.stall?.processes.find((found) => found.pid === sleeper);
    expect(sleeping).toMatchObject({ commandLine: "sleep 600", state: "S" });
    expect(described).toContain(sleeper);
    expect(await becomes(() => !isAlive(sleeper), 2_000)).toBe(true);
  });

  it("ends with its command, even when a process it left behind holds its output open", async () => {
    const { output, text } = captured();
    const startedAt = Date.now();
    const run = await runWatched("sh", ["-c", "sleep 600 & echo left $!"], {
      env: process.env,
      stallAfterMs: 60_000,
      output,
    });
    leftovers.push(Number(/left (\d+)/.exec(text())?.[1]));
    expect(run).toEqual({ status: 0, signal: null, stall: null });
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  });
});

describe("what a stalled test run is found waiting on", () => {
  const reportsDirectory = mkdtempSync(path.join(tmpdir(), "handshake-reports-"));
  afterAll(() => rmSync(reportsDirectory, { recursive: true, force: true }));
  // As vitest.config.ts starts its workers.
  const REPORTING = ["--report-on-signal", `--report-directory=${reportsDirectory}`];

  it("names a worker's socket to the database, the session's statement, and a loop that never came back", async () => {
    const waiting = spawn(
      process.execPath,
      [
        ...REPORTING,
        "--input-type=module",
        "-e",
        `import pg from "pg";
         const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
         await client.connect();
         console.log("connected");
         await client.query("SELECT pg_sleep(600) AS stall_probe");`,
      ],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "ignore"] },
    );
    const spinning = spawn(process.execPath, [...REPORTING, "-e", "for (;;) {}"], {
      stdio: "ignore",
    });
    leftovers.push(waiting.pid as number, spinning.pid as number);
    await new Promise((resolve) => waiting.stdout.once("data", resolve));
    const databaseUrl = process.env.DATABASE_URL as string;
    const observer = new pg.Client({ connectionString: databaseUrl });
    await observer.connect();
    const sleeping = async () =>
      (
        await observer.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600) AS stall_probe%'",
        )
      ).rows;
    try {
      for (let tries = 0; (await sleeping()).length === 0; tries++) {
        if (tries > 200) throw new Error("the probe's statement never reached the server");
        await new Promise((resolve) => setTimeout(resolve, 25));
      }

      const processes = [
        ...processTree(waiting.pid as number),
        ...processTree(spinning.pid as number),
      ];
      const details = await describeTestStall(processes, databaseUrl);

      const port = new URL(databaseUrl).port || "5432";
      expect(details).toMatch(new RegExp(`process ${waiting.pid} waits on: .*tcp to :${port}`));
      expect(details).toContain(`process ${spinning.pid} wrote no report within 5 s`);
      expect(details).toMatch(
        /active on handshake_test_\w+, Timeout\/PgSleep for .*SELECT pg_sleep\(600\)/,
      );
    } finally {
      // Killing its client does not end a sleeping statement: end the session itself.
      await observer.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(600) AS stall_probe%'",
      );
      await observer.end();
    }
  });
});
