import pg from "pg";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { listCommittedEventsAfterOn } from "../../lib/events/data";
import { applyMigrations } from "../../lib/migrations";
import { parseEventNotification, readEventNotifyKey } from "../../lib/realtime/event-notification";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

// Its own database: another file's commits would notify this listener too.
const adminUrl = inject("adminDatabaseUrl");
let databaseUrl: string;
let writer: pg.Client;
let listener: pg.Client;
const payloads: string[] = [];

beforeAll(async () => {
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_events_notify");
  await applyMigrations(databaseUrl, { isQuiet: true });
  writer = new pg.Client({ connectionString: databaseUrl });
  listener = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([writer.connect(), listener.connect()]);
  listener.on("notification", (message) => payloads.push(message.payload ?? ""));
  await listener.query("LISTEN handshake_events");
});

afterAll(async () => {
  await Promise.all([writer.end(), listener.end()]);
  await dropScratchDatabase(adminUrl, databaseUrl);
});

it("signs and notifies a statement's events in one call of its trigger, in id order", async () => {
  // Counts PL/pgSQL calls in this session's transaction (pg_stat_xact_user_functions).
  await writer.query("SET track_functions = 'pl'");
  await writer.query("BEGIN");
  const { rows: inserted } = await writer.query<{ id: string }>(
    `INSERT INTO events (kind, subject, data)
     SELECT 'agent.updated', 'agent:notified-' || n,
            jsonb_build_object('agent', 'notified-' || n,
                               'note', CASE WHEN n = 3 THEN repeat('x', 9000) ELSE 'short' END)
     FROM generate_series(1, 6) n
     RETURNING id`,
  );
  const { rows: calls } = await writer.query<{ funcname: string; calls: string }>(
    `SELECT funcname, calls FROM pg_stat_xact_user_functions WHERE funcname LIKE 'events_notify%'`,
  );
  await writer.query("COMMIT");
  expect(calls.map(({ funcname, calls: count }) => [funcname, Number(count)])).toEqual([
    ["events_notify_inserted", 1],
  ]);

  const ids = inserted.map(({ id }) => Number(id));
  await expect.poll(() => payloads.length).toBe(ids.length);
  const key = await readEventNotifyKey(writer);
  const notified = payloads.map((payload) => parseEventNotification(payload, key));
  expect(notified.map(({ id }) => id)).toEqual(ids);

  // Each payload signs the event as the bridge reads it from the table; the third, too large
  // for a payload, names its id alone.
  const stored = await listCommittedEventsAfterOn(writer, (ids[0] as number) - 1);
  expect(notified.map(({ event }) => event)).toEqual(
    stored.map((event, index) => (index === 2 ? undefined : event)),
  );
  expect(payloads[2]).toBe(String(ids[2]));
});

it("signs nothing for a role that attaches the signing function to a table of its own", async () => {
  // Any login may create a temporary table and put a trigger on it; the events table's own
  // trigger is the only one that may call the function with the key.
  const attacker = `handshake_forger_${process.pid}`;
  await writer.query(`CREATE ROLE ${attacker} LOGIN`);
  const forger = new pg.Client({ connectionString: databaseUrl });
  await forger.connect();
  try {
    await forger.query(`SET ROLE ${attacker}`);
    await forger.query(
      `CREATE TEMP TABLE forged (id bigint, kind text, subject text, data jsonb,
                                 created_at timestamptz)`,
    );
    await expect(
      forger.query(
        `CREATE TRIGGER forged_signed AFTER INSERT ON forged REFERENCING NEW TABLE AS inserted
         FOR EACH STATEMENT EXECUTE FUNCTION public.events_notify_inserted()`,
      ),
    ).rejects.toThrow(/permission denied for function (public\.)?events_notify_inserted/);
  } finally {
    await forger.end();
    await writer.query(`DROP ROLE ${attacker}`);
  }
});
