import { env } from "../lib/env";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { loadOrCreateLocalSecrets } from "./local-secrets";

// Runs the embedded PostgreSQL in its own process group (start.ts spawns it detached), so a Ctrl-C
// in the terminal reaches the server and agents but not the database: the database stops last,
// when start.ts asks, after everything that uses it has gone.
const secrets = await loadOrCreateLocalSecrets(env.HANDSHAKE_DATA_DIR);
const database = await startEmbeddedPostgres({
  dataDir: env.HANDSHAKE_DATA_DIR,
  port: env.HANDSHAKE_EMBEDDED_PG_PORT,
  password: secrets.postgresPassword,
});
process.send?.({ url: database.url });

let isStopping = false;
async function stop(): Promise<void> {
  if (isStopping) return;
  isStopping = true;
  await database.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("disconnect", () => void stop());
