import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { childProcessEnv } from "../../lib/env";
import { applyMigrations } from "../../lib/migrations";
import {
  issueSupervisorToken,
  spawnSupervisor,
  waitForHealth,
} from "../../scripts/product-processes";
import { adminDatabaseUrl } from "../../tests/admin-database-url";
import { createScratchDatabase, dropScratchDatabase } from "../../tests/test-database";
import { E2E_BASE_URL, E2E_LEAD, E2E_MODEL_STUB, E2E_PORT } from "./accounts";
import { SERVER_NODE_ARGS } from "../../scripts/server-command";

// Playwright's web server: the real production server and the supervisor (which runs real worker
// processes) on a fresh database and data folder, both removed afterwards.
const adminUrl = adminDatabaseUrl();
const databaseUrl = await createScratchDatabase(adminUrl, "handshake_e2e");
await applyMigrations(databaseUrl, { isQuiet: true });
const dataDir = await mkdtemp(path.join(tmpdir(), "handshake-e2e-"));

const server = spawn(process.execPath, SERVER_NODE_ARGS, {
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
const serverExit = new Promise<number>((resolve) =>
  server.once("exit", (code) => resolve(code ?? 1)),
);
let supervisor: ChildProcess | null = null;

let isStopping = false;
async function stop(exitCode: number): Promise<void> {
  if (isStopping) return;
  isStopping = true;
  for (const child of [supervisor, server]) {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
  }
  await dropScratchDatabase(adminUrl, databaseUrl);
  await rm(dataDir, { recursive: true, force: true });
  process.exit(exitCode);
}
process.on("SIGTERM", () => void stop(0));
process.on("SIGINT", () => void stop(0));
void serverExit.then((code) => {
  if (!isStopping) {
    console.error(`e2e server exited unexpectedly (${code})`);
    void stop(1);
  }
});

await waitForHealth(E2E_BASE_URL, serverExit);
supervisor = spawnSupervisor({
  serverUrl: E2E_BASE_URL,
  supervisorToken: await issueSupervisorToken(databaseUrl),
  dataDir,
  anthropic: { baseUrl: E2E_MODEL_STUB.url, apiKey: E2E_MODEL_STUB.apiKey },
});
