import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { EventWitness } from "../bench/handshake";
import { createScratchDatabase, dropScratchDatabase } from "./test-database";

// Its own database: its notifications would reach other files' listeners of the channel.
const adminUrl = inject("adminDatabaseUrl");
let databaseUrl: string;
let notifier: pg.Client;
let witness: EventWitness;
beforeAll(async () => {
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_witness");
  notifier = new pg.Client({ connectionString: databaseUrl });
  await notifier.connect();
  witness = await EventWitness.start(databaseUrl);
});
afterAll(async () => {
  await witness.stop();
  await notifier.end();
  await dropScratchDatabase(adminUrl, databaseUrl);
});

const notify = (id: number) =>
  notifier.query("SELECT pg_notify('handshake_events', $1)", [String(id)]);

describe("the bench's event witness (bench/handshake.ts)", () => {
  it("listens only while a measurement runs, so the other phases carry no extra listener", async () => {
    await notify(1);
    await expect(witness.receivedAt(1)).rejects.toThrow(/not listening/);

    await witness.listening(async () => {
      await notify(2);
      expect(await witness.receivedAt(2)).toBeGreaterThan(0);
      // Committed before the LISTEN: never delivered, so the connection was not listening then.
      await expect(witness.receivedAt(1, 200)).rejects.toThrow(/never saw/);
    });

    await notify(3);
    await witness.listening(async () => {
      await notify(4);
      expect(await witness.receivedAt(4)).toBeGreaterThan(0);
      // Notifications arrive in commit order: had 3 been delivered, it would be seen by now.
      await expect(witness.receivedAt(3, 200)).rejects.toThrow(/never saw/);
    });
  });

  it("records an id that comes after a wait for it ran out, in that window or the next", async () => {
    await witness.listening(async () => {
      await expect(witness.receivedAt(21, 100)).rejects.toThrow(/never saw/);
      await notify(21);
      // Notifications arrive in commit order: once 22 is seen, 21 has come too.
      await notify(22);
      expect(await witness.receivedAt(22)).toBeGreaterThan(0);
      expect(await witness.receivedAt(21, 200)).toBeGreaterThan(0);

      // A wait the measurement leaves behind when its window ends.
      witness.receivedAt(23, 2_000).catch(() => undefined);
    });
    await witness.listening(async () => {
      await notify(23);
      await notify(24);
      expect(await witness.receivedAt(24)).toBeGreaterThan(0);
      expect(await witness.receivedAt(23, 200)).toBeGreaterThan(0);
    });
  });

  it("keeps the newest ids of a burst and lets the oldest go", async () => {
    await witness.listening(async () => {
      await notifier.query(
        "SELECT pg_notify('handshake_events', id::text) FROM generate_series(101, 12100) id",
      );
      expect(await witness.receivedAt(12_100)).toBeGreaterThan(0);
      expect(await witness.receivedAt(8_100)).toBeGreaterThan(0);
      await expect(witness.receivedAt(101, 200)).rejects.toThrow(/never saw/);
    });
  });
});
