import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["{lib,app,components,agents,scripts,prisma,tests}/**/*.test.{ts,tsx}"],
    exclude: ["**/node_modules/**", "lib/generated/**"],
    globalSetup: ["tests/global-setup.ts"],
    setupFiles: ["tests/setup-env.ts"],
    pool: "forks",
    // A stalled run is asked what each worker waits on before it is killed (scripts/test.ts).
    execArgv: [
      "--report-on-signal",
      `--report-directory=${path.resolve(import.meta.dirname, "test-results/node-reports")}`,
    ],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
