import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { pruneAuditTrail } from "../../lib/events/prune";

// Issue 12, item 10: the application cannot rewrite or delete its own audit trail; only the
// retention job can, and it records what it removed.

const db = getDb();
afterAll(() => db.$disconnect());

async function decidedRequest(respondedAt: Date) {
  const agent = await db.agent.create({
    data: {
      name: `audit-${randomBytes(3).toString("hex")}`,
      role: "tester",
      tokenHash: randomBytes(32).toString("hex"),
    },
  });
  const request = await db.request.create({
    data: {
      id: `req_${randomBytes(16).toString("hex")}`,
      type: "plan_approval",
      agentId: agent.id,
      sender: agent.name,
      target: "lead",
      payload: { plan: "p" },
      incarnation: 1,
      expiresAt: new Date(Date.now() + 60_000),
    },
  });
  await db.request.update({
    where: { id: request.id },
    data: {
      status: "approved",
      respondedBy: "lead@example.com",
      respondedAt,
      decidedBy: { kind: "human", userId: "u_audit", sessionId: "s_audit" },
    },
  });
  return { agent, request };
}

describe("append-only audit trail", () => {
  it("refuses to delete a decided request, directly or by deleting its agent", async () => {
    const { agent, request } = await decidedRequest(new Date());
    await expect(db.request.delete({ where: { id: request.id } })).rejects.toThrow(/append-only/);
    await expect(db.agent.delete({ where: { id: agent.id } })).rejects.toThrow(/append-only/);
    expect(await db.request.count({ where: { id: request.id } })).toBe(1);
  });

  it("refuses any update or delete of an event", async () => {
    const event = await db.event.create({ data: { kind: "test.kept", subject: "test:1" } });
    await expect(
      db.event.update({ where: { id: event.id }, data: { kind: "test.rewritten" } }),
    ).rejects.toThrow(/append-only/);
    await expect(db.event.delete({ where: { id: event.id } })).rejects.toThrow(/append-only/);
    // The retention job's setting lets it delete, never rewrite.
    await expect(
      db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT set_config('handshake.prune', 'on', true)`;
        await tx.event.update({ where: { id: event.id }, data: { kind: "test.rewritten" } });
      }),
    ).rejects.toThrow(/append-only/);
    expect(await db.event.findUniqueOrThrow({ where: { id: event.id } })).toMatchObject({
      kind: "test.kept",
    });
  });

  it("the prune job removes what is older than the cutoff and records what it removed", async () => {
    const old = new Date("2020-01-01T00:00:00Z");
    const { request: oldRequest } = await decidedRequest(old);
    const { request: recent } = await decidedRequest(new Date());
    const oldEvent = await db.event.create({
      data: { kind: "test.old", subject: "test:old", createdAt: old },
    });
    const result = await pruneAuditTrail(db, { before: "2021-01-01" });
    expect(result.events).toBeGreaterThanOrEqual(1);
    expect(result.requests).toBeGreaterThanOrEqual(1);
    expect(await db.request.count({ where: { id: oldRequest.id } })).toBe(0);
    expect(await db.request.count({ where: { id: recent.id } })).toBe(1);
    expect(await db.event.count({ where: { id: oldEvent.id } })).toBe(0);
    const record = await db.event.findFirstOrThrow({
      where: { kind: "audit.pruned" },
      orderBy: { id: "desc" },
    });
    expect(record.data).toMatchObject({
      before: "2021-01-01T00:00:00.000Z",
      events: result.events,
      requests: result.requests,
    });
    // The bypass ended with the job's transaction.
    await expect(db.event.delete({ where: { id: record.id } })).rejects.toThrow(/append-only/);
  });
});
