import { existsSync, readFileSync, rmSync } from "node:fs";
import { childProcessEnv } from "../lib/env";
import { adminDatabaseUrl } from "../tests/admin-database-url";
import {
  playwrightFailures,
  vitestFailures,
  type PlaywrightReport,
  type VitestReport,
} from "./failed-tests";
import { describeTestStall } from "./stall-details";
import { runSteps, summaryLines, type Step } from "./test-steps";
import { RUNNING_FILES } from "./vitest-running-files";

// `npm test`: every check the project has, in order, then one summary line CI can read.
const testEnv = childProcessEnv({ NEXT_TELEMETRY_DISABLED: "1" });
const VITEST_REPORT = "test-results/vitest.json";
const PLAYWRIGHT_REPORT = "test-results/playwright.json";
/**
 * Silence that means a runner stalled: over five times the 54 s the slowest test file takes here,
 * and each file prints its line as it ends (decision 081).
 */
const STALL_AFTER_MS = 5 * 60_000;

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
      "--reporter=./scripts/vitest-running-files.ts",
    ],
    mayStall: true,
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
  {
    name: "production build (no warnings)",
    command: ["node", "--import", "tsx", "scripts/build-without-warnings.ts"],
  },
  {
    name: "end to end (Playwright, Chromium)",
    command: ["npx", "playwright", "test"],
    mayStall: true,
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

for (const stale of [VITEST_REPORT, PLAYWRIGHT_REPORT, RUNNING_FILES])
  rmSync(stale, { force: true });
const summary = await runSteps(steps, {
  env: testEnv,
  stallAfterMs: STALL_AFTER_MS,
  describe: (processes) => describeTestStall(processes, adminDatabaseUrl()),
});
console.log(`\n${summaryLines(summary).join("\n")}`);
process.exit(summary.failedSteps.length ? 1 : 0);
