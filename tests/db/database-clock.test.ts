import { afterEach, describe, expect, it, vi } from "vitest";
import {
  databaseNow,
  databaseNowMs,
  startDatabaseClock,
  syncDatabaseClock,
} from "../../lib/database-clock";
import { getDb, type Db } from "../../lib/db";
import { readDatabaseNowMs } from "../support/database-now";

// The node's clock is made wrong by moving `Date.now`, as a node whose NTP failed (or that NTP
// stepped) would read it; PostgreSQL's clock is the machine's, so the database's time is known
// within a round trip.

const SKEW_MS = 20 * 60_000;
const realNow = Date.now.bind(Date);

function skewNodeClock(skewMs: number): void {
  vi.spyOn(Date, "now").mockImplementation(() => realNow() + skewMs);
}

async function expectDatabaseTime(): Promise<void> {
  const before = databaseNowMs();
  const now = await readDatabaseNowMs(getDb());
  const after = databaseNowMs();
  // The database's reading falls between this node's two, give or take the sync's own error.
  expect(now).toBeGreaterThanOrEqual(before - 250);
  expect(now).toBeLessThanOrEqual(after + 250);
}

afterEach(async () => {
  vi.restoreAllMocks();
  // The reading is the process's: the next test must not inherit one taken through a stub.
  await syncDatabaseClock(getDb());
});

describe("the database's clock on a node", () => {
  it("reads the database's time through a node clock 20 minutes behind or ahead", async () => {
    for (const skewMs of [-SKEW_MS, SKEW_MS]) {
      skewNodeClock(skewMs);
      await syncDatabaseClock(getDb());
      await expectDatabaseTime();
      expect(Math.abs(databaseNow().getTime() - realNow())).toBeLessThan(1_000);
      // A time written as text and read back (a signed presence announcement's) must match.
      expect(Number.isInteger(databaseNowMs())).toBe(true);
      // Only the node's judgements are the database's; its own clock stays as it is.
      expect(Date.now() - realNow()).toBeGreaterThanOrEqual(skewMs - 5);
    }
  });

  it("is not moved by a node clock stepped while it runs", async () => {
    // Red team: read as the node's clock plus an offset, a clock stepped three hours on moved
    // every judgement with it until the next sync, and one sweep meanwhile expired every pending
    // request on every node.
    skewNodeClock(0);
    const clock = await startDatabaseClock(getDb(), { intervalMs: 60_000 });
    try {
      skewNodeClock(3 * 60 * 60_000);
      await expectDatabaseTime();
      skewNodeClock(-3 * 60 * 60_000);
      await expectDatabaseTime();
    } finally {
      clock.stop();
    }
  });

  it("keeps the last reading while the database cannot be read, and gives up a sync that hangs", async () => {
    const db = getDb();
    let answer: "yes" | "refuse" | "hang" = "yes";
    let calls = 0;
    const flaky = {
      $queryRaw: (...args: Parameters<Db["$queryRaw"]>) => {
        calls += 1;
        if (answer === "refuse") return Promise.reject(new Error("connection refused"));
        if (answer === "hang") return new Promise(() => undefined);
        return db.$queryRaw(...args);
      },
    } as unknown as Db;
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const clock = await startDatabaseClock(flaky, { intervalMs: 20, syncTimeoutMs: 100 });
    try {
      answer = "refuse";
      await vi.waitFor(() =>
        expect(errors).toHaveBeenCalledWith(
          "[clock] could not read the database's clock; keeping the last reading",
          expect.objectContaining({ message: "connection refused" }),
        ),
      );
      await expectDatabaseTime();

      answer = "hang";
      await vi.waitFor(() =>
        expect(errors).toHaveBeenCalledWith(
          "[clock] could not read the database's clock; keeping the last reading",
          expect.objectContaining({ message: "no reading within 100 ms" }),
        ),
      );
      const callsWhenGivenUp = calls;
      // The next sync runs, rather than waiting on the one that hangs.
      await vi.waitFor(() => expect(calls).toBeGreaterThan(callsWhenGivenUp));
      answer = "yes";
      await expectDatabaseTime();
    } finally {
      clock.stop();
    }
  });

  it("says nothing of a reading still under way when the node stops", async () => {
    let calls = 0;
    let isHanging = false;
    const db = getDb();
    const hanging = {
      $queryRaw: (...args: Parameters<Db["$queryRaw"]>) => {
        calls += 1;
        return isHanging ? new Promise(() => undefined) : db.$queryRaw(...args);
      },
    } as unknown as Db;
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const clock = await startDatabaseClock(hanging, { intervalMs: 20, syncTimeoutMs: 100 });
    isHanging = true;
    const callsBefore = calls;
    await vi.waitFor(() => expect(calls).toBeGreaterThan(callsBefore));
    clock.stop();
    // Past the reading's time limit: a stopped node's shutdown is not the database failing.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(errors).not.toHaveBeenCalled();
  });

  it("runs one sync at a time, so an older one cannot finish last", async () => {
    const db = getDb();
    let running = 0;
    let mostAtOnce = 0;
    let readings = 0;
    const slow = {
      $queryRaw: async (...args: Parameters<Db["$queryRaw"]>) => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        readings += 1;
        try {
          await new Promise((resolve) => setTimeout(resolve, 40));
          return await db.$queryRaw(...args);
        } finally {
          running -= 1;
        }
      },
    } as unknown as Db;
    const clock = await startDatabaseClock(slow, { intervalMs: 10 });
    try {
      // Each sync takes three readings of 40 ms or more: ten ticks pass during one.
      await vi.waitFor(() => expect(readings).toBeGreaterThanOrEqual(9), { timeout: 5_000 });
      expect(mostAtOnce).toBe(1);
    } finally {
      clock.stop();
    }
  });

  it("does not start a node whose first reading fails", async () => {
    const unreachable = {
      $queryRaw: () => Promise.reject(new Error("connection refused")),
    } as unknown as Db;
    await expect(startDatabaseClock(unreachable)).rejects.toThrow("connection refused");
  });
});
