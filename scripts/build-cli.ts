import { statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";

/**
 * Bundles bin/cli into one ESM file, bin/dist/handshake.mjs (gitignored), so `bin/handshake` starts
 * in tens of milliseconds on the machine's Node with no TypeScript loader. `--if-stale` rebuilds
 * only when a source under bin/cli, lib/sdk or lib/shared is newer than the bundle.
 */
const ROOT = path.resolve(import.meta.dirname, "..");
export const CLI_BUNDLE = path.join(ROOT, "bin", "dist", "handshake.mjs");
const SOURCE_FOLDERS = ["bin/cli", "lib/sdk", "lib/shared"];

async function newestSource(): Promise<number> {
  let newest = statSync(path.join(ROOT, "package.json")).mtimeMs;
  for (const folder of SOURCE_FOLDERS) {
    const entries = await readdir(path.join(ROOT, folder), { recursive: true }).catch(() => []);
    for (const entry of entries) {
      newest = Math.max(newest, statSync(path.join(ROOT, folder, entry)).mtimeMs);
    }
  }
  return newest;
}

function bundleTime(): number {
  try {
    return statSync(CLI_BUNDLE).mtimeMs;
  } catch {
    return 0;
  }
}

export async function buildCli(options: { ifStale?: boolean } = {}): Promise<boolean> {
  if (options.ifStale && bundleTime() >= (await newestSource())) return false;
  await build({
    entryPoints: [path.join(ROOT, "bin", "cli", "main.ts")],
    outfile: CLI_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    legalComments: "none",
    // commander is CommonJS and requires Node's built-ins; an ESM bundle needs a require for that.
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
  return true;
}

if (import.meta.filename === process.argv[1]) {
  const isBuilt = await buildCli({ ifStale: process.argv.includes("--if-stale") });
  console.log(isBuilt ? `built ${path.relative(ROOT, CLI_BUNDLE)}` : "CLI bundle is up to date");
}
