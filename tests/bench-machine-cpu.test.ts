import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import pg from "pg";
import os from "node:os";
import {
  cpuMsPerCall,
  cpuSecondsOfStat,
  describeMachineBusy,
  postgresCpuBetween,
  readMachineCpu,
  readPostgresCpuSeconds,
  readProcessCpuSeconds,
} from "../bench/machine-cpu";
import { requireDatabaseUrl } from "../lib/env";

describe("the bench's machine CPU split", () => {
  it("reads utime + stime from a stat line, whatever the command's name holds", () => {
    const fields = ["S", ...Array.from({ length: 10 }, () => "0"), "250", "50", "0"];
    expect(cpuSecondsOfStat(`42 (a) b (c)) ${fields.join(" ")}`)).toBe(3);
  });

  it("counts processes present at both readings and those born between, not those gone", () => {
    const before = new Map([
      [1, 2.0],
      [2, 5.0],
    ]);
    const after = new Map([
      [1, 2.5],
      [3, 0.25],
    ]);
    expect(postgresCpuBetween(before, after)).toBe(0.75);
  });

  it("sees the CPU a PostgreSQL backend spends on a query", async () => {
    const client = new pg.Client({ connectionString: requireDatabaseUrl() });
    await client.connect();
    try {
      const before = await readPostgresCpuSeconds();
      expect(before.size).toBeGreaterThan(0);
      await client.query("SELECT count(*) FROM generate_series(1, 3000000)");
      const spent = postgresCpuBetween(before, await readPostgresCpuSeconds());
      expect(spent).toBeGreaterThan(0.05);
    } finally {
      await client.end();
    }
  });

  it("states how busy each part kept the machine between two readings, against all its cores", () => {
    const before = {
      atMs: 1_000,
      serverSeconds: 10,
      postgresSeconds: new Map([[7, 1.0]]),
      benchSeconds: 4,
    };
    const after = {
      atMs: 3_000,
      serverSeconds: 11,
      postgresSeconds: new Map([
        [7, 1.5],
        [8, 0.1],
      ]),
      benchSeconds: 5.5,
    };
    const cores = os.availableParallelism();
    expect(describeMachineBusy(before, after)).toBe(
      `server 50% + PostgreSQL 30% + the bench 75% = 155% of ${cores * 100}% (${cores} cores)`,
    );
    expect(cpuMsPerCall(before, after, 500)).toEqual({ serverMs: 2, postgresMs: 1.2, benchMs: 3 });
  });

  it("reads the bench's own CPU into a machine reading as it spends it", async () => {
    let clock = 0;
    const before = await readMachineCpu(
      async () => 2,
      () => clock,
    );
    const start = process.cpuUsage();
    for (;;) {
      const { user, system } = process.cpuUsage(start);
      if (user + system >= 200_000) break;
    }
    clock = 200;
    const after = await readMachineCpu(
      async () => 2,
      () => clock,
    );
    expect(after.benchSeconds - before.benchSeconds).toBeGreaterThan(0.1);
    expect(describeMachineBusy(before, after)).toMatch(
      /^server 0% \+ PostgreSQL \d+% \+ the bench \d+% = /,
    );
  });

  it("reads one process's CPU by pid as it spends it", async () => {
    // It spins until it has spent half a second of CPU, not of the clock: on a loaded machine
    // a spin timed by the clock got less than the test looked for.
    const busy = spawn(process.execPath, [
      "-e",
      `const spent = () => { const { user, system } = process.cpuUsage(); return user + system; };
      while (spent() < 500_000);
      console.log("spent");
      setInterval(() => {}, 1000);`,
    ]);
    try {
      await new Promise((resolve) => busy.stdout.once("data", resolve));
      expect(await readProcessCpuSeconds(busy.pid)).toBeGreaterThan(0.3);
    } finally {
      busy.kill("SIGKILL");
    }
  });

  it("does not count a process of another name", async () => {
    const busy = spawn(process.execPath, [
      "-e",
      "const end = Date.now() + 1000; while (Date.now() < end);",
    ]);
    const exited = new Promise((resolve) => busy.on("exit", resolve));
    const during = await readPostgresCpuSeconds();
    expect(busy.pid).toBeDefined();
    expect(during.has(busy.pid ?? -1)).toBe(false);
    expect(during.has(process.pid)).toBe(false);
    await exited;
  });
});
