import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventWitness } from "../bench/handshake";

const databaseUrl = () => process.env.DATABASE_URL as string;

let notifier: pg.Client;
let witness: EventWitness;
beforeAll(async () => {
  notifier = new pg.Client({ connectionString: databaseUrl() });
  await notifier.connect();
  witness = await EventWitness.start(databaseUrl());
});
afterAll(async () => {
  await witness.stop();
  await notifier.end();
});

// Ids far above any event the other tests' nodes commit on the same channel.
let nextId = 9_000_000_000 + Math.floor(Math.random() * 1_000_000) * 100_000;
const newId = () => (nextId += 1);
const notify = (id: number) =>
  notifier.query("SELECT pg_notify('handshake_events', $1)", [String(id)]);

describe("the bench's event witness (bench/handshake.ts)", () => {
  it("listens only while a measurement runs, so the other phases carry no extra listener", async () => {
    const before = newId();
    await notify(before);
    await expect(witness.receivedAt(before)).rejects.toThrow(/not listening/);

    await witness.listening(async () => {
      const during = newId();
      await notify(during);
      expect(await witness.receivedAt(during)).toBeGreaterThan(0);
      // Committed before the LISTEN: never delivered, so the connection was not listening then.
      await expect(witness.receivedAt(before, 200)).rejects.toThrow(/never saw/);
    });

    const between = newId();
    await notify(between);
    await witness.listening(async () => {
      const after = newId();
      await notify(after);
      expect(await witness.receivedAt(after)).toBeGreaterThan(0);
      // Notifications arrive in commit order: had `between` been delivered, it would be seen now.
      await expect(witness.receivedAt(between, 200)).rejects.toThrow(/never saw/);
    });
  });

  it("keeps the newest ids of a burst and lets the oldest go", async () => {
    await witness.listening(async () => {
      const first = nextId + 1;
      const last = nextId + 12_000;
      nextId = last;
      await notifier.query(
        "SELECT pg_notify('handshake_events', id::text) FROM generate_series($1::bigint, $2) id",
        [first, last],
      );
      expect(await witness.receivedAt(last)).toBeGreaterThan(0);
      expect(await witness.receivedAt(last - 4_000)).toBeGreaterThan(0);
      await expect(witness.receivedAt(first, 200)).rejects.toThrow(/never saw/);
    });
  });
});
