import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { childProcessEnv } from "../lib/env";
import { BENCH_DIST_DIR } from "./server";
import { benchEnv, isPhaseSelected, type Phase } from "./config";
import type { TableRow } from "./report";

/** What issue 18 compares; the board and the hook do not change with it, history has its own bound. */
const COMPARED_PHASES: readonly Phase[] = [
  "gate",
  "push",
  "loop",
  "breakdown",
  "throughput",
  "scale",
];

/**
 * The "before" of issue 18, measured in the same run: the baseline commit's sources, unpacked with
 * `git archive` (no worktree is registered), served by its own server.ts. It shares this
 * checkout's node_modules, generated Prisma client and Next build: the phases that compare it
 * (gate, loop, throughput, scale) only touch /api/v1 and socket.io, which run from source.
 */
export function prepareBaseline(commit: string): string {
  const dir = path.join(os.tmpdir(), `handshake-bench-baseline-${commit}`);
  if (!existsSync(path.join(dir, "server.ts"))) {
    mkdirSync(dir, { recursive: true });
    const archive = spawnSync("git", ["archive", "--format=tar", commit], {
      maxBuffer: 512 * 2 ** 20,
    });
    if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr}`);
    const unpack = spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout });
    if (unpack.status !== 0) throw new Error(`unpacking ${commit} failed: ${unpack.stderr}`);
  }
  for (const shared of ["node_modules", "lib/generated", BENCH_DIST_DIR]) {
    const link = path.join(dir, shared);
    // A link left by a run from another checkout may point there, or nowhere: point it here.
    rmSync(link, { force: true });
    symlinkSync(path.resolve(shared), link);
  }
  return dir;
}

export type BaselineResults = { commit: string; rows: TableRow[]; results: unknown };

/** Runs this bench (same phases, same sizes) against the baseline's server in a child process. */
export function runBaseline(commit: string): BaselineResults | undefined {
  const phases = COMPARED_PHASES.filter(isPhaseSelected);
  if (phases.length === 0) return undefined;
  const dir = prepareBaseline(commit);
  const out = path.join(os.tmpdir(), `handshake-bench-baseline-${commit}-${process.pid}.json`);
  console.log(`[bench] measuring the baseline ${commit} first (served from ${dir}) …`);
  const child = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts"], {
    stdio: ["ignore", "inherit", "inherit"],
    env: childProcessEnv({
      BENCH_SERVER_DIR: dir,
      BENCH_BASELINE_OUT: out,
      BENCH_ONLY: phases.join(","),
      // The baseline's profile beside this run's, not mixed with it.
      ...(benchEnv.BENCH_CPU_PROF
        ? { BENCH_CPU_PROF: path.join(benchEnv.BENCH_CPU_PROF, "baseline") }
        : {}),
    }),
  });
  if (child.status !== 0) {
    rmSync(out, { force: true });
    throw new Error(`the baseline run failed (exit ${child.status})`);
  }
  return { commit, ...takeBaselineResults(out) };
}

/** The baseline run's results, read once: the file is removed, nothing else reads it. */
export function takeBaselineResults(file: string): Omit<BaselineResults, "commit"> {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Omit<BaselineResults, "commit">;
  } finally {
    rmSync(file, { force: true });
  }
}
