import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { childProcessEnv, env } from "../lib/env";
import { localServerUrl } from "../lib/http/local-url";
import { applyMigrations } from "../lib/migrations";
import { buildIfNeeded } from "./build-if-needed";
import { registerDemoTeam } from "./demo-team";
import { loadOrCreateLocalSecrets } from "./local-secrets";
import {
  assertPortFree,
  describeMissingSandbox,
  issueSupervisorToken,
  spawnSupervisor,
  waitForHealth,
} from "./product-processes";
import { SERVER_NODE_ARGS } from "./server-command";

// `npm start`: the whole product on one machine. Uses DATABASE_URL when given, else boots an
// embedded PostgreSQL under HANDSHAKE_DATA_DIR; then migrates, builds if needed and serves.
const dataDir = path.resolve(env.HANDSHAKE_DATA_DIR);
if (env.PORT === 0) {
  console.error(
    "PORT=0 asks for a random port, which npm start could not find to wait on and point the agents at; choose a port",
  );
  process.exit(1);
}
// Before anything is booted, migrated or built: a server already on the port would answer for ours.
await assertPortFree(env.HOST, env.PORT).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
const secrets = await loadOrCreateLocalSecrets(dataDir);

let databaseHost: ChildProcess | null = null;
let databaseUrl = env.DATABASE_URL;
if (!databaseUrl) {
  databaseHost = spawn(process.execPath, ["--import", "tsx", "scripts/embedded-postgres-host.ts"], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    detached: true,
  });
  databaseUrl = await new Promise<string>((resolve, reject) => {
    databaseHost?.once("message", (message: { url: string }) => resolve(message.url));
    databaseHost?.once("exit", (code) =>
      reject(new Error(`embedded PostgreSQL failed to start (exit ${code})`)),
    );
  });
  console.log(
    `[postgres] embedded PostgreSQL on 127.0.0.1:${env.HANDSHAKE_EMBEDDED_PG_PORT} (data in ${dataDir})`,
  );
}

async function stopDatabase(): Promise<void> {
  const host = databaseHost;
  databaseHost = null;
  if (!host || host.exitCode !== null) return;
  const exited = new Promise((resolve) => host.once("exit", resolve));
  host.kill("SIGTERM");
  await exited;
}

try {
  await applyMigrations(databaseUrl, { isQuiet: true });
  const serverEnv = childProcessEnv({
    NODE_ENV: "production",
    NEXT_TELEMETRY_DISABLED: "1",
    DATABASE_URL: databaseUrl,
    HANDSHAKE_SECRET: env.HANDSHAKE_SECRET ?? secrets.sessionSecret,
  });
  await buildIfNeeded(serverEnv);

  // The server runs as a child so Ctrl-C can stop it first and the database last.
  const server = spawn(process.execPath, SERVER_NODE_ARGS, {
    stdio: "inherit",
    env: serverEnv,
  });
  const children: ChildProcess[] = [server];
  let isStopping = false;
  const stop = () => {
    if (isStopping) return;
    isStopping = true;
    // Reverse order of start: workers (through the supervisor) stop before the server they call.
    for (const child of [...children].reverse()) child.kill("SIGTERM");
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const serverExit = new Promise<number>((resolve) =>
    server.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))),
  );

  const serverUrl = localServerUrl(env.HOST, env.PORT);
  await waitForHealth(serverUrl, serverExit);
  const missingSandbox = await describeMissingSandbox(dataDir);
  if (missingSandbox) console.warn(missingSandbox);
  const supervisorToken = await issueSupervisorToken(databaseUrl);
  const supervisor = spawnSupervisor({ serverUrl, supervisorToken, dataDir });
  children.push(supervisor);
  if (env.HANDSHAKE_DEMO) {
    const registered = await registerDemoTeam(databaseUrl);
    if (registered.length) console.log(`[demo] started the demo team: ${registered.join(", ")}`);
  }

  const exitCode = await serverExit;
  if (supervisor.exitCode === null) supervisor.kill("SIGTERM");
  await stopDatabase();
  console.log("Handshake stopped.");
  process.exit(isStopping ? 0 : exitCode);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stopDatabase();
  process.exit(1);
}
