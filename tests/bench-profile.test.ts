import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  findProcessProfile,
  readCpuProfile,
  summariseProfile,
  type CpuProfile,
} from "../bench/profile";
import { renderProfiles } from "../bench/report";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

// root → handle (lib) → query (pg); root → (idle). Samples 1 ms apart from t = 1,000,000 µs.
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 4] },
    { id: 2, callFrame: frame("handle", "file:///tmp/x-baseline/lib/api/v1/x.ts"), children: [3] },
    { id: 3, callFrame: frame("query", "file:///work/main/node_modules/pg/lib/client.js") },
    { id: 4, callFrame: frame("(idle)", "") },
  ],
  startTime: 1_000_000,
  samples: [4, 2, 3, 3, 4, 4, 4, 2],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
};

describe("bench/profile.ts", () => {
  it("counts only the samples inside the windows, self and inclusive, by project path and package", () => {
    // Samples fall at 1,001,000 … 1,008,000 µs; the window holds the 2nd to the 4th.
    const summary = summariseProfile(PROFILE, {
      windows: [{ startUs: 1_002_000, endUs: 1_004_000 }],
    });
    expect(summary.sampledMs).toBe(3);
    expect(summary.selfByPackage).toEqual([
      { name: "pg", ms: 2, percent: 66.7 },
      { name: "lib/api/v1/x.ts", ms: 1, percent: 33.3 },
    ]);
    expect(summary.inclusiveByFunction).toContainEqual({
      name: "(root) (native/vm):1",
      ms: 3,
      percent: 100,
    });
    expect(summary.inclusiveByFunction).toContainEqual({
      name: "handle lib/api/v1/x.ts:1",
      ms: 3,
      percent: 100,
    });

    const whole = summariseProfile(PROFILE);
    expect(whole.sampledMs).toBe(8);
    expect(whole.selfByFunction[0]).toEqual({ name: "(idle) (native/vm):1", ms: 4, percent: 50 });
  });

  it("cuts a real server-side profile with windows read from this process's clock", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bench-profile-"));
    dirs.push(dir);
    // Busy in `first` for 300 ms, then in `second` for 300 ms; prints each one's window.
    const script = `
      const now = () => Number(process.hrtime.bigint() / 1000n);
      function spin(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x++; return x; }
      function first() { return spin(300); }
      function second() { return spin(300); }
      const a = now(); first(); const b = now(); second(); const c = now();
      console.log(JSON.stringify({ pid: process.pid, first: [a, b], second: [b, c] }));`;
    const printed = execFileSync(
      process.execPath,
      ["--cpu-prof", `--cpu-prof-dir=${dir}`, "-e", script],
      { encoding: "utf8" },
    );
    const run = JSON.parse(printed) as { pid: number; first: number[]; second: number[] };
    const file = findProcessProfile(dir, run.pid);
    expect(file).toBeDefined();
    const profile = readCpuProfile(file as string);
    const inclusiveMs = (windowOf: number[], name: string) =>
      summariseProfile(profile, {
        windows: [{ startUs: windowOf[0] as number, endUs: windowOf[1] as number }],
        top: 100,
      }).inclusiveByFunction.find((share) => share.name.startsWith(`${name} `))?.ms ?? 0;

    expect(inclusiveMs(run.first, "first")).toBeGreaterThan(150);
    expect(inclusiveMs(run.first, "second")).toBe(0);
    expect(inclusiveMs(run.second, "second")).toBeGreaterThan(150);
    expect(inclusiveMs(run.second, "first")).toBe(0);
  });
});

describe("the profiles section of docs/PERFORMANCE.md", () => {
  it("puts each hot path's functions before and after side by side, and says when none were taken", () => {
    const before = summariseProfile(PROFILE);
    const after = summariseProfile(PROFILE, {
      windows: [{ startUs: 1_002_000, endUs: 1_004_000 }],
    });
    const text = renderProfiles({
      after: { verdict: after },
      before: { commit: "46ffd1d", profiles: { verdict: before } },
    });
    expect(text).toContain("Gate verdict allowed by the plan");
    expect(text).toContain("3 ms of samples (before: 8 ms)");
    expect(text).toContain("| # | Self time, before (46ffd1d) | Self time, after |");
    expect(text).toContain("| 1 | 50.0% `(idle) (native/vm):1` | 66.7% `query pg:1` |");
    expect(text).not.toContain("Plan submission");

    expect(renderProfiles(undefined)).toContain("took no CPU profiles");
  });
});
