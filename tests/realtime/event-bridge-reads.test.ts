import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { listEventsAfter, listEventsAfterOn } from "../../lib/events/data";
import { appendEvent } from "../../lib/events/mutations";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { applyMigrations } from "../../lib/migrations";
import { startEventBridge } from "../../lib/realtime/event-bridge";
import { EventHub } from "../../lib/realtime/event-hub";
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

it("reads once for a commit of several events, not once per notification", async () => {
  const hub = new EventHub();
  const published: number[] = [];
  hub.subscribe((event) => published.push(event.id));
  // No poll during the test: every read is one a notification asked for.
  const bridge = await startEventBridge({ databaseUrl, db, hub, pollIntervalMs: 60_000 });
  try {
    await sleep(200);
    for (let commit = 1; commit <= 3; commit++) {
      eventReads.length = 0;
      await inTransaction(db, async (tx) => {
        for (let i = 0; i < 4; i++)
          await appendEvent(tx, "message.sent", "test:reads", {
            messageId: i,
            from: "lead",
            to: "ada",
            type: "message",
          });
      });
      const deadline = Date.now() + 5_000;
      while (published.length < commit * 4 && Date.now() < deadline) await sleep(10);
      await sleep(150);
      expect(published).toHaveLength(commit * 4);
      expect(eventReads).toHaveLength(1);
      // On the LISTEN connection (plain SQL), not through Prisma's pool.
      expect(eventReads[0]).toMatch(/FROM events\s+WHERE/);
    }
  } finally {
    await bridge.stop();
  }
});

it("reads on a plain connection exactly the page Prisma reads", async () => {
  await inTransaction(db, async (tx) => {
    await appendEvent(tx, "request.decided", "request:req_x", {
      requestId: "req_x",
      type: "plan_approval",
      agent: "ada",
      status: "approved",
      respondedBy: "lead",
      decidedBy: { nested: { list: [1, "two"] } },
    });
    await appendEvent(tx, "session.ended", "user:ada", { userId: "ada" });
  });
  const connection = new pg.Client({ connectionString: databaseUrl });
  await connection.connect();
  try {
    const viaPrisma = await listEventsAfter(db, 0);
    expect(viaPrisma.length).toBeGreaterThan(0);
    expect(await listEventsAfterOn(connection, 0)).toEqual(viaPrisma);
    const middle = viaPrisma[Math.floor(viaPrisma.length / 2)]?.id ?? 0;
    expect(await listEventsAfterOn(connection, middle)).toEqual(await listEventsAfter(db, middle));
  } finally {
    await connection.end();
  }
});
