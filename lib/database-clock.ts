import type { Db } from "./db";
import { followedNowMs, type ClockReading } from "./shared/time/followed-clock";

/**
 * The database's clock, as this node reads it: the database's time at the last reading, plus how
 * long ago that was on the node's monotonic clock. The times a web node stamps or judges (a
 * deadline, an expiry, a heartbeat, a silence, a rule's end) are on it, because the database
 * judges by its own clock too (a late decision, the sign-in window, the event feed) and other
 * nodes judge what this one stamped: a node whose own clock is off by minutes, or is stepped while
 * it runs, must neither stamp deadlines nobody can meet nor expire other nodes' requests early
 * (decision 083). Before any reading (a script, an in-process test) it is the node's own clock.
 */
type ClockState = { reading: ClockReading | null };

// server.ts (run by tsx) and Next's bundled route handlers load this module separately; the
// reading one of them takes serves both.
const holder = globalThis as typeof globalThis & { handshakeDatabaseClock?: ClockState };
const state = (holder.handshakeDatabaseClock ??= { reading: null });

/** Readings per sync; the one with the shortest round trip bounds the error best. */
const READINGS_PER_SYNC = 3;
/** The monotonic clock's rate drifts by parts per million: a reading this old is still good. */
export const DATABASE_CLOCK_SYNC_MS = 10_000;
/** A sync that takes longer is given up, so the next one can run. */
const SYNC_TIMEOUT_MS = 5_000;

/**
 * Whole milliseconds, as `Date.now()` gives: a time written as text (a signed presence
 * announcement's) must read back as the number it was.
 */
export function databaseNowMs(): number {
  return followedNowMs(state.reading);
}

export function databaseNow(): Date {
  return new Date(databaseNowMs());
}

/**
 * Reads the database's `clock_timestamp()` and pins it to the midpoint of the query's round trip
 * on the monotonic clock, so the error is at most half that round trip.
 */
export async function syncDatabaseClock(db: Db): Promise<void> {
  let best: (ClockReading & { roundTripMs: number }) | undefined;
  for (let attempt = 0; attempt < READINGS_PER_SYNC; attempt += 1) {
    const started = performance.now();
    const [{ databaseMs }] = await db.$queryRaw<[{ databaseMs: number }]>`
      SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS "databaseMs"`;
    const roundTripMs = performance.now() - started;
    if (!best || roundTripMs < best.roundTripMs) {
      best = { remoteMs: databaseMs, monotonicMs: started + roundTripMs / 2, roundTripMs };
    }
  }
  if (best) state.reading = { remoteMs: best.remoteMs, monotonicMs: best.monotonicMs };
}

function withinTimeout(sync: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no reading within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  return Promise.race([sync, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Syncs now, before the node serves anything, then every DATABASE_CLOCK_SYNC_MS, one sync at a
 * time (an older one finishing last would undo a newer). A failed sync keeps the last reading:
 * the monotonic clock does not drift far in seconds, and a database that cannot be read fails
 * every judgement's transaction anyway.
 */
export async function startDatabaseClock(
  db: Db,
  options: { intervalMs?: number; syncTimeoutMs?: number } = {},
): Promise<{ stop: () => void }> {
  await syncDatabaseClock(db);
  let isSyncing = false;
  let isStopped = false;
  const timer = setInterval(() => {
    if (isSyncing) return;
    isSyncing = true;
    withinTimeout(syncDatabaseClock(db), options.syncTimeoutMs ?? SYNC_TIMEOUT_MS)
      .catch((error: unknown) => {
        if (isStopped) return;
        console.error(
          "[clock] could not read the database's clock; keeping the last reading",
          error,
        );
      })
      .finally(() => {
        isSyncing = false;
      });
  }, options.intervalMs ?? DATABASE_CLOCK_SYNC_MS);
  timer.unref();
  return {
    stop: () => {
      isStopped = true;
      clearInterval(timer);
    },
  };
}
