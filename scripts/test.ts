import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { childProcessEnv } from "../lib/env";
import {
  failureLinesOf,
  playwrightFailures,
  vitestFailures,
  type PlaywrightReport,
  type VitestReport,
} from "./failed-tests";

// `npm test`: every check the project has, in order, then one summary line CI can read. Later
// steps still run after a failure so one run reports everything; the exit code is the verdict.
type Counts = { passed: number; failed: number; skipped: number };
type Step = {
  name: string;
  command: string[];
  counts?: () => Counts;
  failures?: () => string[];
};

const testEnv = childProcessEnv({ NEXT_TELEMETRY_DISABLED: "1" });
const VITEST_REPORT = "test-results/vitest.json";
const PLAYWRIGHT_REPORT = "test-results/playwright.json";

function readJson<T>(file: string): T | null {
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : null;
}

const steps: Step[] = [
  { name: "typecheck", command: ["npx", "tsc", "--noEmit"] },
  { name: "lint", command: ["npx", "eslint", "--max-warnings", "0", "."] },
  { name: "format", command: ["npx", "prettier", "--check", "."] },
  {
    name: "CLI bundle (rebuilt if stale)",
    command: ["node", "--import", "tsx", "scripts/build-cli.ts", "--if-stale"],
  },
  {
    name: "test fixtures (the real Claude Code CLI, installed once into a cache)",
    command: ["node", "--import", "tsx", "scripts/install-claude-code.ts"],
  },
  {
    name: "unit and integration (vitest, real PostgreSQL)",
    command: [
      "npx",
      "vitest",
      "run",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${VITEST_REPORT}`,
    ],
    counts: () => {
      const report = readJson<{
        numPassedTests: number;
        numFailedTests: number;
        numPendingTests: number;
        numTodoTests: number;
      }>(VITEST_REPORT);
      if (!report) return { passed: 0, failed: 1, skipped: 0 };
      return {
        passed: report.numPassedTests,
        failed: report.numFailedTests,
        skipped: report.numPendingTests + report.numTodoTests,
      };
    },
    failures: () => vitestFailures(readJson<VitestReport>(VITEST_REPORT) ?? {}, process.cwd()),
  },
  { name: "production build", command: ["npx", "next", "build"] },
  {
    name: "end to end (Playwright, Chromium)",
    command: ["npx", "playwright", "test"],
    counts: () => {
      const report = readJson<{
        stats: { expected: number; unexpected: number; flaky: number; skipped: number };
      }>(PLAYWRIGHT_REPORT);
      if (!report) return { passed: 0, failed: 1, skipped: 0 };
      const { expected, unexpected, flaky, skipped } = report.stats;
      return { passed: expected, failed: unexpected + flaky, skipped };
    },
    failures: () => playwrightFailures(readJson<PlaywrightReport>(PLAYWRIGHT_REPORT) ?? {}),
  },
];

rmSync(VITEST_REPORT, { force: true });
rmSync(PLAYWRIGHT_REPORT, { force: true });
const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const failedSteps: string[] = [];
const failedTests: string[] = [];
for (const step of steps) {
  console.log(`\n=== ${step.name}: ${step.command.join(" ")}`);
  const startedAt = Date.now();
  const result = spawnSync(step.command[0] ?? "", step.command.slice(1), {
    stdio: "inherit",
    env: testEnv,
  });
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  const isOk = result.status === 0;
  if (!isOk) failedSteps.push(step.name);
  console.log(`=== ${step.name}: ${isOk ? "ok" : `FAILED (exit ${result.status})`} in ${seconds}s`);
  if (step.counts) {
    const counts = step.counts();
    total.passed += counts.passed;
    total.failed += counts.failed;
    total.skipped += counts.skipped;
    if (!isOk || counts.failed > 0) {
      failedTests.push(...failureLinesOf(step.name, step.failures?.() ?? []));
    }
  } else if (!isOk) {
    total.failed += 1;
  }
}

console.log("");
if (failedTests.length)
  console.log(`Failed tests:\n${failedTests.map((t) => `  ${t}`).join("\n")}`);
if (failedSteps.length) console.log(`Failed steps: ${failedSteps.join(", ")}`);
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(failedSteps.length ? 1 : 0);
