import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareBaseline, takeBaselineResults } from "../bench/baseline";

const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
let baselineDir: string | undefined;

afterAll(() => {
  if (baselineDir) rmSync(baselineDir, { recursive: true, force: true });
});

describe("the bench's unpacked baseline", () => {
  it("links this checkout's node_modules, also over a dangling link another checkout left", () => {
    baselineDir = prepareBaseline(commit);
    const link = path.join(baselineDir, "node_modules");
    expect(readlinkSync(link)).toBe(path.resolve("node_modules"));

    // What a run from a worktree since removed leaves behind.
    rmSync(link);
    symlinkSync(path.join(baselineDir, "gone", "node_modules"), link);
    expect(existsSync(link)).toBe(false);

    expect(prepareBaseline(commit)).toBe(baselineDir);
    expect(readlinkSync(link)).toBe(path.resolve("node_modules"));
    expect(existsSync(path.join(link, "vitest"))).toBe(true);
  });
});

describe("the baseline run's results", () => {
  it("are read once and leave no file behind", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "bench-baseline-results-"));
    try {
      const file = path.join(dir, "results.json");
      const results = { rows: [], results: { gate: { verdict: { errors: 0 } } } };
      writeFileSync(file, JSON.stringify(results));
      expect(takeBaselineResults(file)).toEqual(results);
      expect(existsSync(file)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
