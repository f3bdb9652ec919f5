import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";

const SOURCE_ROOTS = [
  "app",
  "components",
  "lib",
  "next.config.ts",
  "package-lock.json",
  "postcss.config.mjs",
];

async function newestMtime(entry: string): Promise<number> {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of await readdir(entry)) {
    if (child === "generated" || child === "node_modules") continue;
    newest = Math.max(newest, await newestMtime(path.join(entry, child)));
  }
  return newest;
}

/** Runs `next build` when there is no production build or a source file is newer than it. */
export async function buildIfNeeded(env: NodeJS.ProcessEnv): Promise<void> {
  const buildId = path.resolve(".next", "BUILD_ID");
  if (existsSync(buildId)) {
    const builtAt = statSync(buildId).mtimeMs;
    const sourcesChangedAt = Math.max(...(await Promise.all(SOURCE_ROOTS.map(newestMtime))));
    if (sourcesChangedAt <= builtAt) return;
  }
  console.log("[build] building the console (next build)…");
  const result = spawnSync("npx", ["next", "build"], { stdio: "inherit", env });
  if (result.status !== 0) throw new Error(`next build failed with exit code ${result.status}`);
}
