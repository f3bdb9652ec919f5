import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeEach, expect, it } from "vitest";
import { env } from "../lib/env";
import { createScratchDatabase, dropScratchDatabase } from "../tests/test-database";

const ROOT = path.resolve(import.meta.dirname, "..");
const adminUrl = env.TEST_ADMIN_DATABASE_URL;

let dataDir: string;
let databaseUrl: string;
let earlier: Server;
let earlierPort: number;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "handshake-start-"));
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_start");
  // An earlier Handshake still running: it answers the health check `npm start` waits on.
  earlier = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ ok: true, db: "ok" }));
  });
  await new Promise<void>((resolve) => earlier.listen(0, "127.0.0.1", resolve));
  earlierPort = (earlier.address() as { port: number }).port;
});
afterEach(async () => {
  earlier.close();
  await dropScratchDatabase(adminUrl, databaseUrl);
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `npm start`'s script until it exits (killed, with what it started, after 20 s). */
async function runStart(
  extraEnv: Record<string, string>,
): Promise<{ exitCode: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    cwd: ROOT,
    // Its own process group: a start that goes on runs `next build`, which must go too.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: databaseUrl, HANDSHAKE_DATA_DIR: dataDir, ...extraEnv },
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const exitCode = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), 20_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  return { exitCode, output };
}

/** Nothing was migrated, and no supervisor ran: its workers' folders would be under the data. */
async function expectNothingStarted(): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const tables = await db.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.rows).toEqual([]);
  } finally {
    await db.end();
  }
  expect(await readdir(dataDir)).not.toContain("workspaces");
}

it("npm start on a port a running server holds stops at once, before it migrates anything", async () => {
  // Without the check it migrates, builds and starts a supervisor against the earlier server.
  const { exitCode, output } = await runStart({ HOST: "127.0.0.1", PORT: String(earlierPort) });
  expect(output).toContain(`127.0.0.1:${earlierPort} is already in use`);
  expect(exitCode).toBe(1);
  await expectNothingStarted();
}, 30_000);

it("npm start refuses PORT=0, whose random port it could not wait on", async () => {
  // Without the refusal the server would listen on a port of its own choosing while the start
  // waited for its health on port 0, forever.
  const { exitCode, output } = await runStart({ HOST: "127.0.0.1", PORT: "0" });
  expect(output).toContain("PORT=0 asks for a random port");
  expect(exitCode).toBe(1);
  await expectNothingStarted();
}, 30_000);
