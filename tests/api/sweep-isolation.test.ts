import { afterAll, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { expireDueRequests } from "../../lib/requests/mutations";
import { registerAgent, submitPlan } from "./fixtures";

// The sweep runs ahead of the clock and a trigger on `requests` makes one expiry fail: both would
// reach every file's requests on the shared database, so this file has its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_sweep");
});

afterAll(() => getDb().$disconnect());

async function statusOf(id: string): Promise<string | undefined> {
  return (await getDb().request.findUnique({ where: { id } }))?.status;
}

describe("the sweep", () => {
  it("expires the due requests behind one whose expiry fails, and leaves that one due", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(String((await submitPlan(await registerAgent({ requirePlan: true }))).json.id));
    }
    const [poisoned, ...others] = ids as [string, ...string[]];
    const db = getDb();
    await db.$executeRawUnsafe(`
      CREATE FUNCTION poisoned_expiry() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'this expiry fails'; END $$`);
    await db.$executeRawUnsafe(`
      CREATE TRIGGER poisoned_expiry BEFORE UPDATE ON requests FOR EACH ROW
      WHEN (OLD.id = '${poisoned}') EXECUTE FUNCTION poisoned_expiry()`);
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const hourAhead = Date.now() + 3_600_000;
    try {
      const expired = await expireDueRequests(db, new Date(hourAhead));
      expect(expired.map((request) => request.id).sort()).toEqual([...others].sort());
      expect(logged).toHaveBeenCalledWith(
        expect.stringContaining(`1 due request(s) not expired, tried again in 60 s: ${poisoned}: `),
      );
      // It rests: the next sweeps neither try it nor log it again, until its minute is up.
      expect(await expireDueRequests(db, new Date(hourAhead + 1_000))).toEqual([]);
      expect(logged).toHaveBeenCalledTimes(1);
    } finally {
      logged.mockRestore();
      await db.$executeRawUnsafe(`DROP TRIGGER poisoned_expiry ON requests`);
      await db.$executeRawUnsafe(`DROP FUNCTION poisoned_expiry()`);
    }
    expect(await statusOf(poisoned)).toBe("pending");
    for (const id of others) expect(await statusOf(id)).toBe("expired");

    const retried = await expireDueRequests(db, new Date(hourAhead + 61_000));
    expect(retried.map((request) => request.id)).toEqual([poisoned]);
  });
});
