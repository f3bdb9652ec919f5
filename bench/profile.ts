import { readFileSync } from "node:fs";

// Where the server's CPU went, from V8 .cpuprofiles (BENCH_CPU_PROF: taken through the server's
// inspector while the hot paths' phases run; or `node --cpu-prof`): by package and by function,
// self time and inclusive time, over the whole profile or only inside time windows. V8 stamps
// samples with the same monotonic clock as `process.hrtime` (CLOCK_MONOTONIC on Linux, in
// microseconds), so the bench can mark a hot path's windows in its own process and cut them out
// of the server's profiles afterwards.

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
export type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
};

/** A stretch of time on the monotonic clock, in microseconds. */
export type TimeWindow = { startUs: number; endUs: number };

export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Marks the time `run` takes as one window of `into`. */
export async function inWindow<T>(into: TimeWindow[], run: () => Promise<T>): Promise<T> {
  const startUs = monotonicUs();
  try {
    return await run();
  } finally {
    into.push({ startUs, endUs: monotonicUs() });
  }
}

export function readCpuProfile(file: string): CpuProfile {
  return JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
}

export type Share = { name: string; ms: number; percent: number };
export type ProfileSummary = {
  sampledMs: number;
  selfByPackage: Share[];
  selfByFunction: Share[];
  inclusiveByFunction: Share[];
};

/** A frame's package (`pg`, `@prisma/client`), `node:internal`, V8's own, or the project file. */
function packageOf(url: string): string {
  if (!url) return "(native/vm)";
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) {
    const rest = url.slice(modules + "node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith("node:")) return "node:internal";
  // Project files by their path in the checkout, wherever it was unpacked (the baseline is in /tmp).
  const project = /\/(?:app|bench|components|lib|agents|\.next[^/]*)\/.*$|\/server\.ts$/.exec(url);
  return project ? project[0].slice(1) : url;
}

function ranked(entries: Map<string, number>, totalUs: number, top: number): Share[] {
  return [...entries]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({
      name,
      ms: Math.round(us / 1000),
      percent: totalUs === 0 ? 0 : Math.round((us / totalUs) * 1000) / 10,
    }));
}

/**
 * Self and inclusive time per package and function, over one profile or several (the phases
 * profiled one by one); with `windows`, only the samples taken inside one of them. A sample's time
 * is its profile's start plus the deltas up to it.
 */
export function summariseProfile(
  profiles: CpuProfile | readonly CpuProfile[],
  options: { windows?: readonly TimeWindow[]; top?: number } = {},
): ProfileSummary {
  const top = options.top ?? 25;
  const windows = options.windows;
  const isCounted = (timeUs: number) =>
    !windows || windows.some((window) => timeUs >= window.startUs && timeUs <= window.endUs);

  const selfByPackage = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const inclusiveByFunction = new Map<string, number>();
  const add = (into: Map<string, number>, key: string, us: number) =>
    into.set(key, (into.get(key) ?? 0) + us);
  const label = (node: ProfileNode) =>
    `${node.callFrame.functionName || "(anonymous)"} ${packageOf(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;

  let totalUs = 0;
  for (const profile of "nodes" in profiles ? [profiles] : profiles) {
    const selfUs = new Map<number, number>();
    let timeUs = profile.startTime;
    profile.samples.forEach((id, index) => {
      const deltaUs = profile.timeDeltas[index] ?? 0;
      timeUs += deltaUs;
      if (isCounted(timeUs)) selfUs.set(id, (selfUs.get(id) ?? 0) + deltaUs);
    });

    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const parent = new Map<number, number>();
    for (const node of profile.nodes) {
      for (const child of node.children ?? []) parent.set(child, node.id);
    }
    for (const [id, us] of selfUs) {
      const node = byId.get(id);
      if (!node) continue;
      totalUs += us;
      add(selfByPackage, packageOf(node.callFrame.url), us);
      add(selfByFunction, label(node), us);
      // Inclusive: every distinct frame on the stack, once (recursion is not counted twice).
      const seen = new Set<string>();
      for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
        const frame = byId.get(cursor);
        if (!frame) break;
        const name = label(frame);
        if (seen.has(name)) continue;
        seen.add(name);
        add(inclusiveByFunction, name, us);
      }
    }
  }
  return {
    sampledMs: Math.round(totalUs / 1000),
    selfByPackage: ranked(selfByPackage, totalUs, top),
    selfByFunction: ranked(selfByFunction, totalUs, top),
    inclusiveByFunction: ranked(inclusiveByFunction, totalUs, top),
  };
}

/** The hot paths issue 18 asks profiles of, each cut out of the server's profile by its windows. */
export const HOT_PATHS = {
  verdict: "Gate verdict allowed by the plan (`POST /tool-calls`, phase gate)",
  ruleAllowed: "Gate verdict allowed by a rule (phase gate)",
  submission: "Plan submission (`POST /requests`, G3.3)",
  decision: "Decision (`POST /requests/{id}/responses`, G3.3)",
  push: "Push to 20 consoles (G3.1)",
} as const;
export type HotPath = keyof typeof HOT_PATHS;
export type HotPathProfiles = Partial<Record<HotPath, ProfileSummary>>;

export function emptyHotPathWindows(): Record<HotPath, TimeWindow[]> {
  return { verdict: [], ruleAllowed: [], submission: [], decision: [], push: [] };
}

/** Each measured hot path's share of the server's profiles (of the phases that ran). */
export function profileHotPaths(
  profiles: readonly CpuProfile[],
  windows: Record<HotPath, TimeWindow[]>,
): HotPathProfiles {
  const summaries: HotPathProfiles = {};
  for (const hotPath of Object.keys(HOT_PATHS) as HotPath[]) {
    if (windows[hotPath].length === 0) continue;
    summaries[hotPath] = summariseProfile(profiles, { windows: windows[hotPath], top: 12 });
  }
  return summaries;
}
