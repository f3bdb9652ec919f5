import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";

const db = getDb();
afterAll(() => db.$disconnect());

function requestId(): string {
  return `req_${randomBytes(16).toString("hex")}`;
}

async function createAgent(name: string) {
  return db.agent.create({
    data: { name, role: "tester", tokenHash: randomBytes(32).toString("hex") },
  });
}

function pendingRequest(agentId: string, type: string) {
  return {
    id: requestId(),
    type,
    agentId,
    sender: "alice",
    target: "lead",
    payload: { plan: "do things" },
    incarnation: 1,
    expiresAt: new Date(Date.now() + 60_000),
  };
}

const DECIDED_BY = { kind: "human", userId: "u", sessionId: "s" };

describe("database constraints", () => {
  it("refuses a second pending request of the same type for the same agent", async () => {
    const agent = await createAgent(`dup-${randomBytes(3).toString("hex")}`);
    await db.request.create({ data: pendingRequest(agent.id, "plan_approval") });
    await expect(
      db.request.create({ data: pendingRequest(agent.id, "plan_approval") }),
    ).rejects.toThrow(/Unique constraint/i);
    // A different type, or a new pending one once the first is decided, is fine.
    await db.request.create({ data: pendingRequest(agent.id, "shutdown") });
    await db.request.updateMany({
      where: { agentId: agent.id, type: "plan_approval" },
      data: {
        status: "approved",
        respondedAt: new Date(),
        respondedBy: "lead@example.com",
        decidedBy: DECIDED_BY,
      },
    });
    await db.request.create({ data: pendingRequest(agent.id, "plan_approval") });
    expect(await db.request.count({ where: { agentId: agent.id, status: "pending" } })).toBe(2);
  });

  it("refuses a second pending tool approval of the same call, not of another call", async () => {
    const agent = await createAgent(`calls-${randomBytes(3).toString("hex")}`);
    const toolApproval = (callHash: string) => ({
      ...pendingRequest(agent.id, "tool_approval"),
      payload: { tool: "Bash", args: { command: callHash }, callHash },
    });
    await db.request.create({ data: toolApproval("a".repeat(64)) });
    await db.request.create({ data: toolApproval("b".repeat(64)) });
    await expect(db.request.create({ data: toolApproval("a".repeat(64)) })).rejects.toThrow(
      /Unique constraint/i,
    );
    expect(await db.request.count({ where: { agentId: agent.id, status: "pending" } })).toBe(2);
  });

  it("never lets a decided request change again", async () => {
    const agent = await createAgent(`final-${randomBytes(3).toString("hex")}`);
    const request = await db.request.create({ data: pendingRequest(agent.id, "plan_approval") });
    await db.request.update({
      where: { id: request.id },
      data: {
        status: "rejected",
        feedback: "no",
        respondedAt: new Date(),
        respondedBy: "lead",
        decidedBy: DECIDED_BY,
      },
    });
    await expect(
      db.request.update({ where: { id: request.id }, data: { status: "approved" } }),
    ).rejects.toThrow(/can no longer change/);
    expect((await db.request.findUniqueOrThrow({ where: { id: request.id } })).status).toBe(
      "rejected",
    );
  });

  it("never lets a request's payload change, pending or not: what the Lead read is what is decided", async () => {
    // A decision names a request by its id alone; the payload was final by convention only.
    const agent = await createAgent(`payload-${randomBytes(3).toString("hex")}`);
    const request = await db.request.create({ data: pendingRequest(agent.id, "plan_approval") });
    await expect(
      db.request.update({
        where: { id: request.id },
        data: { payload: { plan: "1. push to production" } },
      }),
    ).rejects.toThrow(/payload is final/);
    const stored = await db.request.findUniqueOrThrow({ where: { id: request.id } });
    expect(stored.payload).toEqual(request.payload);
    // Its other fields still move while it is pending.
    const later = new Date(Date.now() + 60_000);
    await db.request.update({ where: { id: request.id }, data: { expiresAt: later } });
  });

  it("lets a decided tool approval be marked used once, alone, and never unused again", async () => {
    const agent = await createAgent(`used-${randomBytes(3).toString("hex")}`);
    const approval = await db.request.create({
      data: {
        ...pendingRequest(agent.id, "tool_approval"),
        payload: { tool: "bash", args: { command: "git push" }, callHash: "h" },
        status: "approved",
        respondedAt: new Date(),
        respondedBy: "lead",
        decidedBy: DECIDED_BY,
      },
    });
    const where = { id: approval.id };
    await expect(
      db.request.update({ where, data: { approvalUsed: true, feedback: "and a note" } }),
    ).rejects.toThrow(/can no longer change/);
    await db.request.update({ where, data: { approvalUsed: true } });
    await expect(db.request.update({ where, data: { approvalUsed: false } })).rejects.toThrow(
      /can no longer change/,
    );
    expect(await db.request.findUniqueOrThrow({ where })).toMatchObject({
      approvalUsed: true,
      feedback: null,
      status: "approved",
    });
  });

  it("marks an approval used by the call recorded with it: allowed, or voided as FILE_CHANGED", async () => {
    const agent = await createAgent(`marks-${randomBytes(3).toString("hex")}`);
    const approve = () =>
      db.request.create({
        data: {
          ...pendingRequest(agent.id, "tool_approval"),
          payload: {
            tool: "bash",
            args: { command: "git push" },
            callHash: randomBytes(4).toString("hex"),
          },
          status: "approved",
          respondedAt: new Date(),
          respondedBy: "lead",
          decidedBy: DECIDED_BY,
        },
      });
    const [ran, voided, blocked, other] = [
      await approve(),
      await approve(),
      await approve(),
      await approve(),
    ];
    const call = (requestId: string, isAllowed: boolean, code: string | null) =>
      db.toolCall.create({
        data: {
          agentId: agent.id,
          incarnation: 1,
          tool: "bash",
          args: {},
          gate: "approved",
          isAllowed,
          code,
          requestId,
        },
      });
    await call(ran.id, true, null);
    await call(voided.id, false, "FILE_CHANGED");
    await call(blocked.id, false, "TOOL_APPROVAL_DENIED");
    const used = await db.request.findMany({
      where: { id: { in: [ran.id, voided.id, blocked.id, other.id] }, approvalUsed: true },
      select: { id: true },
    });
    expect(used.map(({ id }) => id).sort()).toEqual([ran.id, voided.id].sort());
  });

  it("refuses a decided status without a decision time", async () => {
    const agent = await createAgent(`time-${randomBytes(3).toString("hex")}`);
    const request = await db.request.create({ data: pendingRequest(agent.id, "plan_approval") });
    await expect(
      db.request.update({ where: { id: request.id }, data: { status: "approved" } }),
    ).rejects.toThrow(/requests_decided_has_time/);
  });

  it.each(["Alice", "lead", "agent", "-x", "a b", "a".repeat(41), "../etc"])(
    "refuses the agent name %j",
    async (name) => {
      await expect(createAgent(name)).rejects.toThrow(/agents_name_format/);
    },
  );

  it("notifies the id of every inserted event, first in the payload", async () => {
    const { default: pg } = await import("pg");
    const { requireDatabaseUrl } = await import("../../lib/env");
    const listener = new pg.Client({ connectionString: requireDatabaseUrl() });
    await listener.connect();
    try {
      await listener.query("LISTEN handshake_events");
      const notified = new Promise<string>((resolve) =>
        listener.on("notification", (message) => resolve(message.payload ?? "")),
      );
      const event = await db.event.create({ data: { kind: "test.happened", subject: "test" } });
      // The id alone, or the id before the signed event (migration 016).
      expect(await notified).toMatch(new RegExp(`^${event.id}(?: |$)`));
    } finally {
      await listener.end();
    }
  });
});
