import type { Db } from "./db";

/**
 * The database's clock, as this node reads it: the node's own clock plus the offset last measured
 * against PostgreSQL's. The times a web node stamps or judges (a deadline, an expiry, a heartbeat,
 * a silence, a rule's end) are on it, because the database judges by its own clock too (a late
 * decision, the sign-in window, the event feed) and other nodes judge what this one stamped: a
 * node whose own clock is off by minutes must neither stamp deadlines nobody can meet nor expire
 * other nodes' requests early (decision 083).
 */
type ClockState = { offsetMs: number };

// server.ts (run by tsx) and Next's bundled route handlers load this module separately; the
// offset one of them measures serves both.
const holder = globalThis as typeof globalThis & { handshakeDatabaseClock?: ClockState };
const state = (holder.handshakeDatabaseClock ??= { offsetMs: 0 });

/** Readings per sync; the one with the shortest round trip bounds the error best. */
const READINGS_PER_SYNC = 3;
/** Long enough to cost nothing, short enough that a node's clock being stepped is caught soon. */
export const DATABASE_CLOCK_SYNC_MS = 10_000;

export function databaseNowMs(): number {
  return Date.now() + state.offsetMs;
}

export function databaseNow(): Date {
  return new Date(databaseNowMs());
}

/**
 * Measures the offset: the database's `clock_timestamp()` against the midpoint of this node's
 * clock around the query, so the error is at most half the round trip.
 */
export async function syncDatabaseClock(db: Db): Promise<void> {
  let best: { roundTripMs: number; offsetMs: number } | undefined;
  for (let reading = 0; reading < READINGS_PER_SYNC; reading += 1) {
    const sentAt = Date.now();
    const started = performance.now();
    const [{ databaseMs }] = await db.$queryRaw<[{ databaseMs: number }]>`
      SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS "databaseMs"`;
    const roundTripMs = performance.now() - started;
    if (!best || roundTripMs < best.roundTripMs) {
      best = { roundTripMs, offsetMs: databaseMs - (sentAt + roundTripMs / 2) };
    }
  }
  // Whole milliseconds, as `Date.now()` gives: a time written as text (a signed presence
  // announcement's) must read back as the number it was.
  if (best) state.offsetMs = Math.round(best.offsetMs);
}

/**
 * Syncs now, before the node serves anything, then every DATABASE_CLOCK_SYNC_MS, one sync at a
 * time (an older one finishing last would undo a newer). A failed sync keeps the last offset:
 * the node's clock does not drift far in seconds, and a database that cannot be read fails every
 * judgement's transaction anyway.
 */
export async function startDatabaseClock(
  db: Db,
  options: { intervalMs?: number } = {},
): Promise<{ stop: () => void }> {
  await syncDatabaseClock(db);
  let isSyncing = false;
  const timer = setInterval(() => {
    if (isSyncing) return;
    isSyncing = true;
    syncDatabaseClock(db)
      .catch((error: unknown) => {
        console.error(
          "[clock] could not read the database's clock; keeping the last offset",
          error,
        );
      })
      .finally(() => {
        isSyncing = false;
      });
  }, options.intervalMs ?? DATABASE_CLOCK_SYNC_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
