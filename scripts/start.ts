import { spawn } from "node:child_process";
import path from "node:path";
import { childProcessEnv, env } from "../lib/env";
import { applyMigrations } from "../lib/migrations";
import { buildIfNeeded } from "./build-if-needed";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./embedded-postgres";
import { loadOrCreateLocalSecrets } from "./local-secrets";

// `npm start`: the whole product on one machine. Uses DATABASE_URL when given, else boots an
// embedded PostgreSQL under HANDSHAKE_DATA_DIR; then migrates, builds if needed and serves.
const dataDir = path.resolve(env.HANDSHAKE_DATA_DIR);
const secrets = await loadOrCreateLocalSecrets(dataDir);

let embedded: EmbeddedDatabase | null = null;
let databaseUrl = env.DATABASE_URL;
if (!databaseUrl) {
  embedded = await startEmbeddedPostgres({
    dataDir,
    port: env.HANDSHAKE_EMBEDDED_PG_PORT,
    password: secrets.postgresPassword,
  });
  databaseUrl = embedded.url;
  console.log(
    `[postgres] embedded PostgreSQL on 127.0.0.1:${env.HANDSHAKE_EMBEDDED_PG_PORT} (data in ${dataDir})`,
  );
}

async function stopDatabase(): Promise<void> {
  if (embedded) await embedded.stop();
  embedded = null;
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
  const server = spawn(process.execPath, ["--import", "tsx", "server.ts"], {
    stdio: "inherit",
    env: serverEnv,
  });
  let isStopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (isStopping) return;
    isStopping = true;
    server.kill(signal === "SIGINT" ? "SIGTERM" : signal);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const exitCode = await new Promise<number>((resolve) =>
    server.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))),
  );
  await stopDatabase();
  console.log("Handshake stopped.");
  process.exit(isStopping ? 0 : exitCode);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stopDatabase();
  process.exit(1);
}
