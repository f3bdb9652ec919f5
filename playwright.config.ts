import { defineConfig, devices } from "@playwright/test";
import { E2E_BASE_URL } from "./e2e/support/accounts";
import { env } from "./lib/env";

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results/e2e",
  // One server, one database, two cores: specs run one at a time so timings stay honest.
  workers: 1,
  fullyParallel: false,
  forbidOnly: env.CI,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [["list"], ["json", { outputFile: "test-results/playwright.json" }]],
  use: {
    baseURL: E2E_BASE_URL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: env.CHROMIUM_PATH,
      // No network here: stop Chromium's background lookups of Google hosts.
      args: ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"],
    },
  },
  projects: [
    {
      name: "chromium",
      use: { ...devices["Desktop Chrome"], viewport: { width: 1280, height: 800 } },
    },
  ],
  webServer: {
    command: "node --import tsx e2e/support/server.ts",
    url: `${E2E_BASE_URL}/api/v1/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
    stdout: "pipe",
    stderr: "pipe",
  },
});
