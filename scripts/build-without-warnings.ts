import { spawn } from "node:child_process";
import { stripVTControlCharacters } from "node:util";

/**
 * `next build` for `npm test`: its output passes through as it comes, and a build that warns
 * fails. A warning is easy to miss in a green run and each one was a defect: a dynamic file
 * path made the tracer walk the whole project on every build.
 */

/** The warnings in a build's output: Turbopack's summary line and each warning after it. */
export function buildWarnings(output: string): string[] {
  return output
    .split("\n")
    .map((line) => stripVTControlCharacters(line).trim())
    .filter((line) => /^(Turbopack build encountered \d+ warnings?|Warning: )/.test(line));
}

async function main(): Promise<void> {
  const build = spawn("npx", ["next", "build"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  build.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    process.stdout.write(chunk);
  });
  build.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    process.stderr.write(chunk);
  });
  const code = await new Promise<number | null>((resolve) => build.on("close", resolve));
  if (code !== 0) process.exit(code ?? 1);
  const warnings = buildWarnings(output);
  if (warnings.length > 0) {
    console.error(`the build warned; fix each warning:\n${warnings.join("\n")}`);
    process.exit(1);
  }
}

if (import.meta.filename === process.argv[1]) await main();
