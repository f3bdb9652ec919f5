import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { expireDueRequests } from "../../lib/requests/mutations";
import { registerAgent, submitPlan } from "../api/fixtures";

// A server whose TimeZone is not UTC, as a laptop's PostgreSQL is (initdb takes the system's zone):
// set on a database of its own, for every session that opens on it (decision 079). West of UTC, a
// time sent without its zone reads as later than it is, so a sweep would expire too early.
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_zone");
  const { default: postgres } = await import("pg");
  const admin = new postgres.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const name = new URL(process.env.DATABASE_URL as string).pathname.slice(1);
  await admin.query(`ALTER DATABASE ${name} SET TimeZone = 'America/Los_Angeles'`);
  await admin.end();
});

afterAll(() => getDb().$disconnect());

async function secondsFromNow(sql: string, id: string): Promise<number> {
  const [row] = await getDb().$queryRawUnsafe<{ seconds: number }[]>(
    `SELECT extract(epoch FROM (${sql}))::float8 AS seconds FROM requests WHERE id = $1`,
    id,
  );
  return row?.seconds ?? Number.NaN;
}

describe("a database whose sessions start in another time zone", () => {
  it("starts a plain session in that zone (the case the app must not fall into)", async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      expect((await client.query("SHOW TimeZone")).rows[0]).toEqual({
        TimeZone: "America/Los_Angeles",
      });
    } finally {
      await client.end();
    }
  });

  it("keeps a plan's deadline as far ahead as the API says, so the sweep leaves it waiting", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const submitted = await submitPlan(agent);
    expect(submitted.status).toBe(201);
    const id = String(submitted.json.id);
    const promised = (Date.parse(String(submitted.json.expiresAt)) - Date.now()) / 1000;
    expect(promised).toBeGreaterThan(60);

    const ahead = await secondsFromNow("expires_at - now()", id);
    expect(Math.abs(ahead - promised)).toBeLessThan(30);
    const sinceCreated = await secondsFromNow("now() - created_at", id);
    expect(Math.abs(sinceCreated)).toBeLessThan(30);

    const expired = await expireDueRequests(getDb());
    expect(expired.map((request) => request.id)).not.toContain(id);
  });
});
