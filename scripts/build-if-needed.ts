import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { env } from "../lib/env";

/** What a production build is made of: a change under any of these makes the build stale. */
const SOURCE_ROOTS = [
  "app",
  "components",
  "lib",
  "next.config.ts",
  "package-lock.json",
  "postcss.config.mjs",
];

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of readdirSync(entry)) {
    if (child === "generated" || child === "node_modules") continue;
    newest = Math.max(newest, newestMtime(path.join(entry, child)));
  }
  return newest;
}

export type BuildState = "current" | "stale" | "missing";

/** Whether `distDir` holds a build at least as new as every source it was made from. */
export function readBuildState(distDir: string): BuildState {
  const buildId = path.resolve(distDir, "BUILD_ID");
  if (!existsSync(buildId)) return "missing";
  const sourcesChangedAt = Math.max(...SOURCE_ROOTS.map(newestMtime));
  return sourcesChangedAt <= statSync(buildId).mtimeMs ? "current" : "stale";
}

/** Runs `next build` when there is no production build or a source file is newer than it. */
export async function buildIfNeeded(buildEnv: NodeJS.ProcessEnv): Promise<void> {
  if (readBuildState(env.HANDSHAKE_NEXT_DIST_DIR) === "current") return;
  console.log("[build] building the console (next build)…");
  const result = spawnSync("npx", ["next", "build"], { stdio: "inherit", env: buildEnv });
  if (result.status !== 0) throw new Error(`next build failed with exit code ${result.status}`);
}
