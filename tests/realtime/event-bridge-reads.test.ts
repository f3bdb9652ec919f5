import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import {
  GAP_WAIT_MS,
  listCommittedEventsAfter,
  listCommittedEventsAfterOn,
  MAX_EVENTS_PAGE,
} from "../../lib/events/data";
import { appendEvent } from "../../lib/events/mutations";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { applyMigrations } from "../../lib/migrations";
import { startEventBridge, type EventBridge } from "../../lib/realtime/event-bridge";
import { EventHub } from "../../lib/realtime/event-hub";
import type { ConsoleEvent } from "../../lib/shared/realtime/contract";
import { inTransaction } from "../../lib/transaction";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

// Its own database: every other test file's commits would otherwise notify this bridge too, and
// the reads they cause are what this file counts.
const adminUrl = inject("adminDatabaseUrl");
let databaseUrl: string;
let db: PrismaClient;

// The bridge reads on its LISTEN connection, or through Prisma's pool while that is down; both
// end in pg.Client#query, which sees either spelling of a read of the events table.
const EVENTS_READ = /^SELECT .* FROM "?(?:public"?\."?)?events"?\s+WHERE/is;
const eventReads: string[] = [];
const originalQuery = pg.Client.prototype.query;

function countEventReads(this: pg.Client, ...args: unknown[]): unknown {
  const config = args[0];
  const text = typeof config === "string" ? config : (config as { text?: unknown } | null)?.text;
  if (typeof text === "string" && EVENTS_READ.test(text)) eventReads.push(text);
  return (originalQuery as (...queryArgs: unknown[]) => unknown).apply(this, args);
}

beforeAll(async () => {
  pg.Client.prototype.query = countEventReads as typeof originalQuery;
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_bridge_reads");
  await applyMigrations(databaseUrl, { isQuiet: true });
  db = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 4 }) });
});

afterAll(async () => {
  pg.Client.prototype.query = originalQuery;
  await db.$disconnect();
  await dropScratchDatabase(adminUrl, databaseUrl);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Too large for a NOTIFY payload, so the trigger sends its id alone (migration 016).
const OVERSIZE = "x".repeat(9_000);

/**
 * Runs `body` with a bridge on a hub of its own and what that hub published, and stops the bridge
 * after it. No poll during a test: every read is one a notification asked for.
 */
async function withQuietBridge(
  body: (quiet: { bridge: EventBridge; published: ConsoleEvent[] }) => Promise<void>,
): Promise<void> {
  const hub = new EventHub();
  const published: ConsoleEvent[] = [];
  hub.subscribe((event) => published.push(event));
  const bridge = await startEventBridge({ databaseUrl, db, hub, pollIntervalMs: 60_000 });
  try {
    await sleep(200);
    await body({ bridge, published });
  } finally {
    await bridge.stop();
  }
}

/** Two kinds of event in one commit; `decidedBy` is free-form, so each case nests its own there. */
async function commitDecisionAndSessionEnd(requestId: string, decidedBy: unknown): Promise<void> {
  await inTransaction(db, async (tx) => {
    await appendEvent(tx, "request.decided", `request:${requestId}`, {
      requestId,
      type: "plan_approval",
      agent: "ada",
      status: "approved",
      respondedBy: "lead",
      decidedBy,
    });
    await appendEvent(tx, "session.ended", "user:ada", { userId: "ada" });
  });
}

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await sleep(10);
}

async function notifyFromElsewhere(payload: string): Promise<void> {
  const connection = new pg.Client({ connectionString: databaseUrl });
  await connection.connect();
  try {
    await connection.query("SELECT pg_notify('handshake_events', $1)", [payload]);
  } finally {
    await connection.end();
  }
}

it("reads once for a commit of several id-only events, not once per notification", async () => {
  await withQuietBridge(async ({ published }) => {
    for (let commit = 1; commit <= 3; commit++) {
      eventReads.length = 0;
      await inTransaction(db, async (tx) => {
        for (let i = 0; i < 4; i++)
          await appendEvent(tx, "message.sent", "test:reads", {
            messageId: i,
            from: "lead",
            to: "ada",
            type: "message",
            // Beyond the catalog's fields, as a future larger payload would be.
            ...{ padding: OVERSIZE },
          });
      });
      await waitFor(() => published.length >= commit * 4);
      await sleep(150);
      expect(published).toHaveLength(commit * 4);
      expect(eventReads).toHaveLength(1);
      // On the LISTEN connection (plain SQL), not through Prisma's pool.
      expect(eventReads[0]).toMatch(/FROM events\s+WHERE/);
    }
  });
});

it("reads on a plain connection exactly the page Prisma reads", async () => {
  await commitDecisionAndSessionEnd("req_x", { nested: { list: [1, "two"] } });
  const connection = new pg.Client({ connectionString: databaseUrl });
  await connection.connect();
  try {
    const viaPrisma = await listCommittedEventsAfter(db, 0);
    expect(viaPrisma.length).toBeGreaterThan(0);
    expect(await listCommittedEventsAfterOn(connection, 0)).toEqual(viaPrisma);
    const middle = viaPrisma[Math.floor(viaPrisma.length / 2)]?.id ?? 0;
    expect(await listCommittedEventsAfterOn(connection, middle)).toEqual(
      await listCommittedEventsAfter(db, middle),
    );
  } finally {
    await connection.end();
  }
});

it("publishes an event from its signed notification, without reading the table", async () => {
  await withQuietBridge(async ({ bridge, published }) => {
    const before = bridge.lastId;
    eventReads.length = 0;
    await commitDecisionAndSessionEnd("req_p", { nested: { list: [1, "two", "é"] } });
    await waitFor(() => published.length >= 2);
    await sleep(150);
    expect(eventReads).toEqual([]);
    // The same events, in the same shape and key order, as a read of the table gives.
    const fromTable = await listCommittedEventsAfter(db, before);
    expect(JSON.stringify(published)).toBe(JSON.stringify(fromTable));
    expect(bridge.lastId).toBe(fromTable.at(-1)?.id);
  });
});

it("delivers an event too large for a payload by its id, read from the table", async () => {
  await withQuietBridge(async ({ bridge, published }) => {
    const before = bridge.lastId;
    eventReads.length = 0;
    await db.event.create({
      data: { kind: "test.large", subject: "test:large", data: { padding: OVERSIZE } },
    });
    await waitFor(() => published.length >= 1);
    expect(eventReads).toHaveLength(1);
    expect(published).toEqual(await listCommittedEventsAfter(db, before));
  });
});

/**
 * An event whose transaction stays open (`low`) and one committed after it (`high`): a higher id
 * commits first. `commitLow` ends the open transaction; call it in a `finally` as well.
 */
async function higherIdCommittedFirst(subject: string) {
  let releaseLow!: () => void;
  const isLowReleased = new Promise<void>((resolve) => (releaseLow = resolve));
  let reportLow!: (id: number) => void;
  const lowId = new Promise<number>((resolve) => (reportLow = resolve));
  const settled = db.$transaction(async (tx) => {
    const row = await tx.event.create({
      data: { kind: "test.low", subject, data: {} },
      select: { id: true },
    });
    reportLow(Number(row.id));
    await isLowReleased;
  });
  const commitLow = async () => {
    releaseLow();
    await settled;
  };
  try {
    const low = await lowId;
    const high = await db.event.create({
      data: { kind: "test.high", subject, data: {} },
      select: { id: true },
    });
    return { low, high: Number(high.id), commitLow };
  } catch (error) {
    await commitLow();
    throw error;
  }
}

/** Commits the open lower id, then expects the pair published in id order, and nothing more. */
async function commitLowAndExpectBoth(
  published: ConsoleEvent[],
  { low, high, commitLow }: Awaited<ReturnType<typeof higherIdCommittedFirst>>,
): Promise<void> {
  await commitLow();
  await waitFor(() => published.length >= 2);
  await sleep(100);
  expect(published.map((event) => event.id)).toEqual([low, high]);
}

it("publishes a higher id committed first after the lower one, in id order", async () => {
  await withQuietBridge(async ({ published }) => {
    const { low, high, commitLow } = await higherIdCommittedFirst("test:order");
    try {
      expect(high).toBeGreaterThan(low);
      await sleep(300);
      expect(published).toEqual([]);
      await commitLowAndExpectBoth(published, { low, high, commitLow });
    } finally {
      await commitLow();
    }
  });
});

it("starts below an event in flight at its start, and publishes it and the later one when it commits", async () => {
  const pair = await higherIdCommittedFirst("test:start");
  try {
    await withQuietBridge(async ({ bridge, published }) => {
      expect(bridge.lastId).toBeLessThan(pair.low);
      await commitLowAndExpectBoth(published, pair);
    });
  } finally {
    await pair.commitLow();
  }
});

it("holds a higher id committed first for the lower one that commits moments later, and reads nothing", async () => {
  await withQuietBridge(async ({ published }) => {
    eventReads.length = 0;
    const { low, high, commitLow } = await higherIdCommittedFirst("test:reorder");
    try {
      expect(high).toBe(low + 1);
      await commitLow();
      await waitFor(() => published.length >= 2);
      await sleep(200);
      expect(published.map((event) => event.id)).toEqual([low, high]);
      expect(eventReads).toEqual([]);
    } finally {
      await commitLow();
    }
  });
});

it("publishes every event once and in order when more come early than it holds", async () => {
  await withQuietBridge(async ({ published }) => {
    const { low, commitLow } = await higherIdCommittedFirst("test:overflow");
    try {
      await db.event.createMany({
        data: Array.from({ length: 600 }, (_, index) => ({
          kind: "test.many",
          subject: "test:overflow",
          data: { index },
        })),
      });
      await commitLow();
      await waitFor(() => published.length >= 602, 10_000);
      await sleep(200);
      const ids = published.map((event) => event.id);
      expect(ids).toHaveLength(602);
      expect(ids[0]).toBe(low);
      expect(ids).toEqual(Array.from({ length: 602 }, (_, index) => low + index));
    } finally {
      await commitLow();
    }
  });
});

it("reads the table for a held id whose lower neighbour never commits", async () => {
  await withQuietBridge(async ({ published }) => {
    eventReads.length = 0;
    let rollBack!: () => void;
    const isRolledBack = new Promise<void>((resolve) => (rollBack = resolve));
    let reportLow!: () => void;
    const isLowWritten = new Promise<void>((resolve) => (reportLow = resolve));
    const rolledBack = db
      .$transaction(async (tx) => {
        await tx.event.create({ data: { kind: "test.lost", subject: "test:gap", data: {} } });
        reportLow();
        await isRolledBack;
        throw new Error("rolled back on purpose");
      })
      .catch(() => undefined);
    try {
      await isLowWritten;
      const high = await db.event.create({
        data: { kind: "test.after-gap", subject: "test:gap", data: {} },
        select: { id: true },
      });
      rollBack();
      await rolledBack;
      await waitFor(() => published.length >= 1, 5_000);
      expect(published.map((event) => event.id)).toEqual([Number(high.id)]);
      expect(eventReads.length).toBeGreaterThan(0);
    } finally {
      rollBack();
    }
  });
});

it("starts the waits of gaps beyond its page when a later id is notified, not page by page", async () => {
  // Red team, round nine: a gap in every page cost a read's GAP_WAIT_MS each, 500 events a second
  // at most, and the bridge fell behind for good above that (rolled-back transactions leave gaps).
  await withQuietBridge(async ({ published }) => {
    // More events between two gaps than a page holds: a read that stops at one sees no other.
    const pages = 7;
    const perPage = MAX_EVENTS_PAGE + 100;
    const writer = new pg.Client({ connectionString: databaseUrl });
    await writer.connect();
    const started = Date.now();
    try {
      await writer.query("BEGIN");
      for (let page = 0; page < pages; page++) {
        // An id taken and never committed: a gap, as a rolled-back transaction leaves.
        if (page > 0) await writer.query("SELECT nextval(pg_get_serial_sequence('events', 'id'))");
        await writer.query(
          `INSERT INTO events (kind, subject, data)
           SELECT 'test.paged', 'test:paged', '{}' FROM generate_series(1, $1)`,
          [perPage],
        );
      }
      await writer.query("COMMIT");
    } finally {
      await writer.end();
    }
    await waitFor(() => published.length >= pages * perPage, 20_000);
    expect(published).toHaveLength(pages * perPage);
    // Waited one after another, the six gaps took 6 × GAP_WAIT_MS at the least.
    expect(Date.now() - started).toBeLessThan(4 * GAP_WAIT_MS);
  });
});

it("publishes no event a forged or malformed notification names", async () => {
  await withQuietBridge(async ({ bridge, published }) => {
    const next = bridge.lastId + 1;
    const forged = JSON.stringify({
      id: next,
      kind: "request.decided",
      subject: "request:req_forged",
      data: { requestId: "req_forged", status: "approved" },
      at: new Date().toISOString(),
    });
    // A signed payload captured from the channel, replayed with another body.
    const signed = new Promise<string>((resolve) => {
      void (async () => {
        const spy = new pg.Client({ connectionString: databaseUrl });
        await spy.connect();
        await spy.query("LISTEN handshake_events");
        spy.on("notification", (message) => {
          resolve(message.payload ?? "");
          void spy.end();
        });
        await db.event.create({ data: { kind: "test.real", subject: "test:spied", data: {} } });
      })();
    });
    const realPayload = await signed;
    await waitFor(() => published.length >= 1);
    expect(published.map((event) => event.subject)).toEqual(["test:spied"]);
    const [, capturedMac] = realPayload.split(" ");
    const target = next + 1;
    const forgedAtTarget = forged.replace(`"id":${next}`, `"id":${target}`);
    for (const payload of [
      `${target} ${"0".repeat(64)} ${forgedAtTarget}`,
      `${target} ${capturedMac} ${forgedAtTarget}`,
      `${target} ${forgedAtTarget}`,
      forgedAtTarget,
      `${target} ${capturedMac}`,
      `${target} ${capturedMac} {not json`,
      "",
      "-1",
      "9".repeat(40),
    ]) {
      await notifyFromElsewhere(payload);
    }
    await sleep(300);
    expect(published.map((event) => event.subject)).toEqual(["test:spied"]);
    expect(bridge.lastId).toBe(next);

    // The id the forgeries named is published as committed, once, not skipped as already sent.
    await db.event.create({ data: { kind: "test.real", subject: "test:after", data: { n: 1 } } });
    await waitFor(() => published.length >= 2);
    await sleep(100);
    expect(published.map((event) => [event.id, event.subject, event.data])).toEqual([
      [next, "test:spied", {}],
      [target, "test:after", { n: 1 }],
    ]);
  });
});
