import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { INSPECTOR_ADDRESS, startProfiling } from "../bench/inspector";
import { summariseProfile, type CpuProfile } from "../bench/profile";
import { renderProfiles } from "../bench/report";

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
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

  it("adds up several profiles, each sample by its own profile's clock", () => {
    // A second profile of the same code, 10 ms later: its first three samples in `handle`/`query`.
    const later: CpuProfile = { ...PROFILE, startTime: 1_010_000, samples: [2, 3, 3, 4] };
    const window = { startUs: 1_002_000, endUs: 1_013_000 };
    const summary = summariseProfile([PROFILE, later], { windows: [window] });
    expect(summary.sampledMs).toBe(7 + 3);
    expect(summary.selfByPackage).toContainEqual({ name: "pg", ms: 4, percent: 40 });
    expect(summary.selfByFunction).toContainEqual({
      name: "(idle) (native/vm):1",
      ms: 3,
      percent: 30,
    });
  });

  it("profiles a process through its inspector, and cuts that profile by this process's clock", async () => {
    // On a line from stdin: busy in `first` for 300 ms, then in `second`; prints each one's window.
    const script = `
      const now = () => Number(process.hrtime.bigint() / 1000n);
      function spin(ms) { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x++; return x; }
      function first() { return spin(300); }
      function second() { return spin(300); }
      process.stdin.once("data", () => {
        const a = now(); first(); const b = now(); second(); const c = now();
        console.log(JSON.stringify({ first: [a, b], second: [b, c] }));
      });`;
    const child = spawn(process.execPath, ["--inspect=127.0.0.1:0", "-e", script], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    const address = await new Promise<string>((resolve) => {
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = INSPECTOR_ADDRESS.exec(stderr)?.[1];
        if (found) resolve(found);
      });
    });
    const stopProfiling = await startProfiling(address);
    const printed = new Promise<string>((resolve) => {
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("\n")) resolve(stdout);
      });
    });
    child.stdin.write("go\n");
    const run = JSON.parse(await printed) as { first: number[]; second: number[] };
    const profile = await stopProfiling();
    const inclusiveMs = (windowOf: number[], name: string) =>
      summariseProfile(profile, {
        windows: [{ startUs: windowOf[0] as number, endUs: windowOf[1] as number }],
        top: 100,
      }).inclusiveByFunction.find((share) => share.name.startsWith(`${name} `))?.ms ?? 0;

    expect(inclusiveMs(run.first, "first")).toBeGreaterThan(150);
    expect(inclusiveMs(run.first, "second")).toBe(0);
    expect(inclusiveMs(run.second, "second")).toBeGreaterThan(150);
    expect(inclusiveMs(run.second, "first")).toBe(0);
  }, 30_000);
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
