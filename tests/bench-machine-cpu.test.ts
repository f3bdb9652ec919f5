import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import pg from "pg";
import { cpuSecondsOfStat, postgresCpuBetween, readPostgresCpuSeconds } from "../bench/machine-cpu";
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
