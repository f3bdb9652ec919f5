import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { childProcessEnv, env } from "../../lib/env";
import { applyMigrations } from "../../lib/migrations";
import { createScratchDatabase, dropScratchDatabase } from "../../tests/test-database";
import { E2E_LEAD, E2E_PORT } from "./accounts";

// Playwright's web server: the real production server on a fresh database, dropped afterwards.
const adminUrl = env.DATABASE_URL ?? env.TEST_ADMIN_DATABASE_URL;
const databaseUrl = await createScratchDatabase(adminUrl, "handshake_e2e");
await applyMigrations(databaseUrl, { isQuiet: true });

const server = spawn(process.execPath, ["--import", "tsx", "server.ts"], {
  stdio: "inherit",
  env: childProcessEnv({
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: databaseUrl,
    PORT: String(E2E_PORT),
    HOST: "127.0.0.1",
    HANDSHAKE_SECRET: randomBytes(32).toString("base64url"),
    HANDSHAKE_ADMIN_EMAIL: E2E_LEAD.email,
    HANDSHAKE_ADMIN_PASSWORD: E2E_LEAD.password,
  }),
});

let isStopping = false;
async function stop(): Promise<void> {
  if (isStopping) return;
  isStopping = true;
  if (server.exitCode === null) {
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
  }
  await dropScratchDatabase(adminUrl, databaseUrl);
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
server.on("exit", (code) => {
  if (!isStopping) {
    console.error(`e2e server exited unexpectedly (${code})`);
    void dropScratchDatabase(adminUrl, databaseUrl).finally(() => process.exit(1));
  }
});
