import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient, type Prisma } from "./generated/prisma/client";
import { requireDatabaseUrl } from "./env";
import { statementCanceled, transactionConflict, type AppError } from "./errors";

/** A client or an open transaction: domain functions take either, so transactions compose. */
export type Db = PrismaClient | Prisma.TransactionClient;

// server.ts (run by tsx) and Next's bundled route handlers load this module separately; one client
// per process keeps a single pool either way.
const holder = globalThis as typeof globalThis & { handshakePrisma?: PrismaClient };

export function getDb(): PrismaClient {
  holder.handshakePrisma ??= createDb(requireDatabaseUrl());
  return holder.handshakePrisma;
}

const pools = new WeakMap<object, pg.Pool>();

export function createDb(databaseUrl: string): PrismaClient {
  // Our own pool, handed to the adapter, so the hottest statement can skip the client (below).
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    // The adapter sends a Date as its UTC digits with no zone, and reads a timestamptz's digits
    // back as UTC: in a session whose TimeZone is not UTC, every deadline that SQL compares with
    // now() would be hours off. Set on each new connection before its first use (a startup
    // option would do it in the handshake, but PgBouncer refuses one); a connection that cannot
    // take it is not used.
    onConnect: async (client) => {
      await client.query("SET TIME ZONE 'UTC'");
    },
  });
  // An idle connection's error (a restarted server) drops that connection; the adapter listens
  // only once Prisma connects, and an "error" event nobody listens to would end the process.
  pool.on("error", () => undefined);
  const db = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
  });
  pools.set(db, pool);
  return db;
}

/**
 * The `pg` pool under a client made by `createDb`, for the hot statements whose client work
 * through Prisma costs more than the statement (`queryHot`, decision 028). Undefined for any
 * other client, an open transaction, or once `$disconnect` ended the pool (Prisma then opens a
 * pool of its own): callers fall back to the client.
 */
export function poolOf(db: Db): pg.Pool | undefined {
  const pool = pools.get(db);
  return pool && !pool.ended ? pool : undefined;
}

/**
 * One of the hot statements (decisions 028, 030, 031): straight to our pool, where it is prepared
 * under `name` once per connection, so PostgreSQL parses and plans it there once instead of on
 * every call (decision 037); through the client, unprepared, when the pool is not ours.
 */
export async function queryHot<Row extends pg.QueryResultRow>(
  db: Db,
  name: string,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  const pool = poolOf(db);
  return pool
    ? (await pool.query<Row>({ name, text, values })).rows
    : db.$queryRawUnsafe<Row[]>(text, ...values);
}

export async function isDatabaseReachable(db: Db): Promise<boolean> {
  try {
    await db.$queryRaw`SELECT 1`;
    return true;
  } catch {
    return false;
  }
}

/** A unique constraint refused the write (Prisma's P2002, or PostgreSQL's 23505 via raw SQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "P2002" || code === "23505";
}

/**
 * The codes an error may carry its SQLSTATE in: through the driver adapter it sits in Prisma's
 * error metadata; through `pg` directly it is the error's own `code`.
 */
function codesOf(error: unknown): unknown[] {
  const candidate = error as {
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
  } | null;
  return [candidate?.code, candidate?.meta?.driverAdapterError?.cause?.originalCode];
}

/** PostgreSQL refused a statement with this SQLSTATE. */
export function hasSqlState(error: unknown, sqlState: string): boolean {
  return codesOf(error).includes(sqlState);
}

function hasSqlStateClass(error: unknown, sqlStateClass: string): boolean {
  const pattern = new RegExp(`^${sqlStateClass}[0-9A-Z]{3}$`);
  return codesOf(error).some((code) => typeof code === "string" && pattern.test(code));
}

/** PostgreSQL refused a value (SQLSTATE class 22: bad JSON, a bad cast, an out-of-range number). */
export function isDataException(error: unknown): boolean {
  return hasSqlStateClass(error, "22");
}

/**
 * PostgreSQL rolled the transaction back (SQLSTATE class 40: a deadlock, a serialization failure),
 * or Prisma says it did (P2034, "a write conflict or a deadlock").
 */
export function isTransactionRollback(error: unknown): boolean {
  return hasSqlStateClass(error, "40") || codesOf(error).includes("P2034");
}

/**
 * The retryable refusal for a statement PostgreSQL undid with its transaction: rolled back
 * against a concurrent one (class 40), or canceled (SQLSTATE 57014: `pg_cancel_backend`, a
 * statement timeout). A grouped statement canceled fails every call of its group with it; the
 * statement rolled back whole. Undefined for any other error.
 */
export function refusalOfUndoneChange(error: unknown): AppError | undefined {
  if (isTransactionRollback(error)) return transactionConflict();
  if (hasSqlState(error, "57014")) return statementCanceled();
  return undefined;
}

const CONNECTION_LOST = new RegExp(
  [
    "ECONNREFUSED|ECONNRESET|ECONNABORTED|EPIPE|ETIMEDOUT",
    // SQLSTATE class 08 (connection exception) and 57P01–57P03 (admin shutdown, crash, cannot connect now)
    "\\b08[0-9A-Z]{3}\\b|57P0[1-3]",
    "terminating connection|Connection terminated|connection timeout|Server has closed the connection",
    // pg, for a pooled client whose connection broke mid-transaction and is then asked again
    "is not queryable",
    "Can't reach database server|Timed out fetching a new connection|Unable to start a transaction",
    // Prisma: P1001 unreachable, P1017 connection closed, P2024 pool timeout, P2028 transaction start
    "P1001|P1017|P2024|P2028",
  ].join("|"),
  "i",
);

/** Connection-level failures (refused, reset, server shutting down, no pool connection free in time) mean "retry", not "bug". */
export function isDatabaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown } | null;
  return CONNECTION_LOST.test(
    `${String(candidate?.code ?? "")} ${String(candidate?.message ?? "")}`,
  );
}
