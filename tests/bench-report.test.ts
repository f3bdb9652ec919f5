import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sizes } from "../bench/config";
import { isWithinMs, loadVerdict, writePerformanceDoc } from "../bench/report";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function write(file: string, commit: string) {
  await writePerformanceDoc({
    path: file,
    date: "2026-11-30",
    commit,
    machine: {
      nproc: 2,
      cpu: "test",
      memoryGiB: 1,
      node: "v20",
      postgres: "PostgreSQL 15",
      loadAverageAtStart: [0, 0, 0],
    },
    durationS: 1,
    resultsFile: "bench/results/x.json",
    rows: [],
    notes: [],
    sizes,
  });
}

describe("docs/PERFORMANCE.md as the bench writes it", () => {
  it("replaces the generated part and keeps what is written by hand below the marker", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "perf-doc-"));
    dirs.push(dir);
    const file = path.join(dir, "PERFORMANCE.md");
    await write(file, "aaaaaaa");
    const generated = await readFile(file, "utf8");
    const handWritten = "\n## A dated record\n\nMeasured by hand.\n";
    await writeFile(file, `${generated}${handWritten}`);
    await write(file, "bbbbbbb");
    const rewritten = await readFile(file, "utf8");
    expect(rewritten).toContain("**commit:** bbbbbbb");
    expect(rewritten).not.toContain("aaaaaaa");
    expect(rewritten.endsWith(handWritten)).toBe(true);
    expect(rewritten.split("## A dated record")).toHaveLength(2);
  });
});

describe("a goal read from a load of calls", () => {
  it("is not met when any call failed, however fast the others were", () => {
    expect(loadVerdict(true, 0)).toBe("met");
    expect(loadVerdict(true, 1)).toBe("not met");
    expect(loadVerdict(false, 0)).toBe("not met");
  });
});

describe("a latency against its line", () => {
  it("is within a line it equals, however the line was added up", () => {
    // The first full run at 5aa253d printed G3.4's push p50 of 1.86 ms "not met" against 0.36 + 1.5.
    expect(0.36 + 1.5 < 1.86).toBe(true);
    expect(isWithinMs(1.86, 0.36 + 1.5)).toBe(true);
    expect(isWithinMs(4 * 0.8, 3.2)).toBe(true);
  });

  it("is not within a line it passes by a microsecond", () => {
    expect(isWithinMs(1.861, 0.36 + 1.5)).toBe(false);
    expect(isWithinMs(10.24, 3.04 + 7)).toBe(false);
  });
});
