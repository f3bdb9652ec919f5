import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
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
const eventReads: string[] = [];

function clientCountingEventReads(url: string) {
  const client = new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, max: 4 }),
    log: [{ emit: "event", level: "query" }],
  });
  client.$on("query", (event) => {
    if (/^SELECT .* FROM "public"\."events" WHERE/.test(event.query)) eventReads.push(event.query);
  });
  return client;
}
let db: ReturnType<typeof clientCountingEventReads>;

beforeAll(async () => {
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_bridge_reads");
  await applyMigrations(databaseUrl, { isQuiet: true });
  db = clientCountingEventReads(databaseUrl);
});

afterAll(async () => {
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
        for (let i = 0; i < 4; i++) await appendEvent(tx, "message.sent", "test:reads", { i });
      });
      const deadline = Date.now() + 5_000;
      while (published.length < commit * 4 && Date.now() < deadline) await sleep(10);
      await sleep(150);
      expect(published).toHaveLength(commit * 4);
      expect(eventReads).toHaveLength(1);
    }
  } finally {
    await bridge.stop();
  }
});
