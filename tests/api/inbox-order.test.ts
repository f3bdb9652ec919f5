import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, lead, registerAgent, submitPlan } from "./fixtures";

afterAll(() => getDb().$disconnect());

const LEAD_PENDING = "?status=pending&target=lead&order=oldest&limit=2";

/** Pages through `query` as the inbox does, following nextCursor to the end. */
async function listAll(query: string): Promise<{ id: string; target: string }[]> {
  const { headers } = await lead();
  const items: { id: string; target: string }[] = [];
  let cursor: string | null = null;
  do {
    const page = await api.listRequests(
      headers,
      `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(page.status, JSON.stringify(page.json)).toBe(200);
    items.push(...(page.json.items as { id: string; target: string }[]));
    cursor = page.json.nextCursor as string | null;
  } while (cursor);
  return items;
}

describe("GET /requests?order=oldest (the Lead's inbox)", () => {
  it("lists every pending request for the Lead, oldest created first, ties by the earlier deadline, across pages", async () => {
    const db = getDb();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const plan = await submitPlan(await registerAgent());
      ids.push(String(plan.json.id));
    }
    // Created long before anything other test files create, so these five come first in the
    // listing; due long after, so no other file's sweep expires them meanwhile.
    const createdAt = (seconds: number) => new Date(Date.UTC(2001, 0, 1, 0, 0, seconds));
    const due = (seconds: number) => new Date(Date.UTC(2101, 0, 1, 0, 0, seconds));
    const placed = [
      { id: ids[0], createdAt: createdAt(3), expiresAt: due(100) },
      { id: ids[1], createdAt: createdAt(1), expiresAt: due(500) },
      { id: ids[2], createdAt: createdAt(2), expiresAt: due(300) },
      { id: ids[3], createdAt: createdAt(2), expiresAt: due(200) },
      { id: ids[4], createdAt: createdAt(1), expiresAt: due(400) },
    ];
    for (const { id, createdAt, expiresAt } of placed) {
      await db.request.update({ where: { id }, data: { createdAt, expiresAt } });
    }
    const agentBound = await api.requestShutdown(
      (await lead()).headers,
      (await registerAgent()).name,
    );
    expect(agentBound.status).toBe(201);

    const listed = await listAll(LEAD_PENDING);
    expect(listed.slice(0, 5).map((item) => item.id)).toEqual([
      ids[4],
      ids[1],
      ids[3],
      ids[2],
      ids[0],
    ]);
    expect(new Set(listed.map((item) => item.id)).size).toBe(listed.length);
    expect(listed.every((item) => item.target === "lead")).toBe(true);
    expect(listed.map((item) => item.id)).not.toContain(agentBound.json.id);
  });

  it.each([
    ["a newest-first cursor", "newest"],
    ["a forged cursor", "forged"],
  ])("refuses %s on the oldest-first listing with 400", async (_what, kind) => {
    const { headers } = await lead();
    for (let i = 0; i < 2; i++) await submitPlan(await registerAgent());
    const newest = await api.listRequests(headers, "?status=pending&limit=1");
    const cursor =
      kind === "newest"
        ? String(newest.json.nextCursor)
        : Buffer.from("o|2001-01-01T00:00:00.000Z|nope|req_x").toString("base64url");
    const response = await api.listRequests(
      headers,
      `${LEAD_PENDING}&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });
});
