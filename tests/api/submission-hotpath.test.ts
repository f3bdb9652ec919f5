import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentActor } from "../../lib/auth/actor";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { getProtocolType } from "../../lib/protocol/registry";
import { trySubmitCommonPlan } from "../../lib/requests/common-submission";
import { createRequestInTransaction, submitRequest } from "../../lib/requests/mutations";
import { inTransaction } from "../../lib/transaction";
import { api, lead, registerAgent } from "./fixtures";

// A worker's plan is one statement (decision 030) that restates what the full transaction writes.
// Each case runs the same submissions for two agents, one through each path, and compares every
// row and event they wrote, with ids, names and times replaced by what they stand for.

const db = getDb();
// A client not made by createDb: the statement goes through Prisma's raw query, not the pg pool.
const prismaOnly = new PrismaClient({
  adapter: new PrismaPg({ connectionString: requireDatabaseUrl(), max: 2 }),
});
const planApproval = getProtocolType("plan_approval");

afterAll(() => Promise.all([db.$disconnect(), prismaOnly.$disconnect()]));

async function newActor(): Promise<AgentActor> {
  const agent = await registerAgent({ requirePlan: true });
  const row = await db.agent.findUniqueOrThrow({ where: { name: agent.name } });
  return { kind: "agent", agentId: row.id, name: row.name, incarnation: row.incarnation };
}

type Submission = { plan: string; idempotencyKey?: string };

function fullPath(actor: AgentActor, submission: Submission) {
  return inTransaction(db, (tx) =>
    createRequestInTransaction(tx, {
      definition: planApproval,
      direction: "agent_to_lead",
      agentId: actor.agentId,
      payload: { plan: submission.plan },
      idempotencyKey: submission.idempotencyKey,
      senderIncarnation: actor.incarnation,
    }),
  );
}

async function commonPath(actor: AgentActor, submission: Submission) {
  const created = await trySubmitCommonPlan(
    db,
    actor,
    planApproval,
    { plan: submission.plan },
    {
      idempotencyKey: submission.idempotencyKey,
    },
  );
  expect(created).not.toBeNull();
  return created!;
}

/** Everything an agent's submissions wrote, in id order, ids and times made comparable. */
async function writtenBy(actor: AgentActor) {
  const requests = await db.request.findMany({
    where: { agentId: actor.agentId },
    orderBy: { createdAt: "asc" },
  });
  const requestIds = requests.map((request) => request.id);
  const alias = (value: unknown): unknown => {
    if (typeof value === "string") {
      return requestIds.reduce(
        (text, id, index) => text.replaceAll(id, `request#${index}`),
        value.replaceAll(actor.name, "<agent>"),
      );
    }
    if (Array.isArray(value)) return value.map(alias);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, alias(item)]));
    }
    return value;
  };
  const messages = await db.message.findMany({
    where: { sender: actor.name },
    orderBy: { id: "asc" },
  });
  const messageIds = messages.map((message) => message.id);
  const events = await db.event.findMany({
    where: {
      OR: [
        { subject: `agent:${actor.name}` },
        { subject: { in: requestIds.map((id) => `request:${id}`) } },
        { subject: "inbox:lead", data: { path: ["from"], equals: actor.name } },
      ],
    },
    orderBy: { id: "asc" },
    select: { kind: true, subject: true, data: true },
  });
  const agent = await db.agent.findUniqueOrThrow({ where: { id: actor.agentId } });
  return {
    agent: alias({ status: agent.status, gate: agent.gate, incarnation: agent.incarnation }),
    requests: requests.map(
      ({ agentId: _agentId, createdAt, respondedAt, expiresAt, ...request }) => ({
        ...(alias(request) as object),
        isResponded: respondedAt !== null,
        expiresLater: expiresAt > createdAt,
      }),
    ),
    messages: messages.map(({ id: _id, agentId: _agentId, createdAt: _createdAt, ...message }) =>
      alias(message),
    ),
    events: events.map((event) => {
      const data = { ...(event.data as Record<string, unknown>) };
      if (typeof data.messageId === "number")
        data.messageId = messageIds.indexOf(BigInt(data.messageId));
      if (typeof data.expiresAt === "string") data.expiresAt = "<time>";
      return alias({ ...event, data });
    }),
  };
}

async function bothPaths(
  submissions: Submission[],
  prepare?: (actor: AgentActor) => Promise<void>,
) {
  const [full, common] = [await newActor(), await newActor()];
  await prepare?.(full);
  await prepare?.(common);
  for (const submission of submissions) {
    const fromFull = await fullPath(full, submission);
    const fromCommon = await commonPath(common, submission);
    expect(comparableAnswer(fromCommon, common)).toEqual(comparableAnswer(fromFull, full));
  }
  const [fullRows, commonRows] = [await writtenBy(full), await writtenBy(common)];
  expect(commonRows).toEqual(fullRows);
  return commonRows;
}

/** What a submission answers, with what differs between two agents taken out. */
function comparableAnswer(
  created: { request: Record<string, unknown>; isCreated: boolean },
  actor: AgentActor,
) {
  const { id: _id, createdAt: _createdAt, expiresAt: _expiresAt, ...request } = created.request;
  return JSON.parse(JSON.stringify({ ...created, request }).replaceAll(actor.name, "<agent>"));
}

describe("a worker's plan in one statement", () => {
  it("writes the same rows and events as the full path for a first plan", async () => {
    const written = await bothPaths([{ plan: "1. read\n2. write" }]);
    expect(written.events.map((event) => (event as { kind: string }).kind)).toEqual([
      "agent.registered",
      "agent.updated",
      "message.sent",
      "request.created",
    ]);
  });

  it("supersedes the pending plan as the full path does, events in the same order", async () => {
    const written = await bothPaths([
      { plan: "first", idempotencyKey: "k1" },
      { plan: "second", idempotencyKey: "k2" },
    ]);
    expect(written.events.map((event) => (event as { kind: string }).kind)).toEqual([
      "agent.registered",
      "agent.updated",
      "message.sent",
      "request.created",
      "request.superseded",
      "agent.updated",
      "message.sent",
      "request.created",
    ]);
  });

  it("leaves a plan asked again after a rejection, and an idempotent retry, to the full path", async () => {
    const actor = await newActor();
    await commonPath(actor, { plan: "Drop the table", idempotencyKey: "once" });
    expect(
      await trySubmitCommonPlan(
        db,
        actor,
        planApproval,
        { plan: "Drop the table" },
        {
          idempotencyKey: "once",
        },
      ),
    ).toBeNull();
    const retried = await submitRequest(db, actor, {
      type: "plan_approval",
      payload: { plan: "Drop the table" },
      idempotencyKey: "once",
    });
    expect(retried.isCreated).toBe(false);

    const rejected = await api.respond((await lead()).headers, retried.request.id, {
      type: "plan_approval_response",
      approve: false,
      feedback: "no",
    });
    expect(rejected.status).toBe(200);
    expect(
      await trySubmitCommonPlan(db, actor, planApproval, { plan: "drop  the TABLE" }, {}),
    ).toBeNull();
    const again = await submitRequest(db, actor, {
      type: "plan_approval",
      payload: { plan: "drop  the TABLE" },
    });
    expect(again.request.askedAgainAfter).toEqual({
      requestId: retried.request.id,
      feedback: "no",
    });
  });

  it("writes nothing for a stopping agent or a stale incarnation, whose full path refuses", async () => {
    const stopping = await newActor();
    await db.agent.update({ where: { id: stopping.agentId }, data: { status: "stopping" } });
    expect(await trySubmitCommonPlan(db, stopping, planApproval, { plan: "p" }, {})).toBeNull();
    await expect(
      submitRequest(db, stopping, { type: "plan_approval", payload: { plan: "p" } }),
    ).rejects.toMatchObject({ code: "AGENT_STOPPING" });

    const stale = await newActor();
    const respawned = { ...stale, incarnation: stale.incarnation - 1 };
    expect(await trySubmitCommonPlan(db, respawned, planApproval, { plan: "p" }, {})).toBeNull();
    await expect(
      submitRequest(db, respawned, { type: "plan_approval", payload: { plan: "p" } }),
    ).rejects.toMatchObject({ code: "STALE_INCARNATION" });
    expect(
      await db.request.count({ where: { agentId: { in: [stopping.agentId, stale.agentId] } } }),
    ).toBe(0);
  });

  it("writes nothing when a decision commits while the statement waits on the row lock", async () => {
    const actor = await newActor();
    const { request: first } = await commonPath(actor, { plan: "Drop the table" });
    const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [actor.agentId]);
      // Its snapshot still shows the plan pending and no rejection to be asked again after.
      const waiting = trySubmitCommonPlan(db, actor, planApproval, { plan: "drop the table" }, {});
      await new Promise((resolve) => setTimeout(resolve, 200));
      await holder.query(
        `UPDATE requests SET status = 'rejected', feedback = 'no', responded_by = 'lead',
           responded_at = now(), decided_by = '{"kind":"timeout","policy":"reject"}'
         WHERE id = $1`,
        [first.id],
      );
      await holder.query("UPDATE agents SET gate = 'rejected', status = 'working' WHERE id = $1", [
        actor.agentId,
      ]);
      await holder.query("COMMIT");
      expect(await waiting).toBeNull();
    } finally {
      await holder.end();
    }
    const again = await submitRequest(db, actor, {
      type: "plan_approval",
      payload: { plan: "drop the table" },
    });
    expect(again.request.askedAgainAfter).toEqual({ requestId: first.id, feedback: "no" });
    expect(await db.request.count({ where: { agentId: actor.agentId } })).toBe(2);
  });

  it.each([
    ["the pg pool", db],
    ["Prisma's raw query", prismaOnly],
  ])(
    "rolls back whole when a request under its idempotency key commits while it waits (%s)",
    async (_, client) => {
      const actor = await newActor();
      await commonPath(actor, { plan: "first" });
      const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [actor.agentId]);
        const waiting = trySubmitCommonPlan(
          client,
          actor,
          planApproval,
          { plan: "second" },
          { idempotencyKey: "shared" },
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        // Another type's request leaves the agent row as it was: only the unique key can tell.
        await holder.query(
          `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation,
           idempotency_key, expires_at)
         VALUES ($1, 'question', $2, $3, 'lead', '{"question":"?"}', $4, 'shared',
           now() + interval '1 hour')`,
          [
            `req_${"0".repeat(24)}${actor.agentId.slice(0, 8)}`,
            actor.agentId,
            actor.name,
            actor.incarnation,
          ],
        );
        await holder.query("COMMIT");
        expect(await waiting).toBeNull();
      } finally {
        await holder.end();
      }
      const requests = await db.request.findMany({
        where: { agentId: actor.agentId },
        orderBy: { createdAt: "asc" },
        select: { type: true, status: true },
      });
      expect(requests).toEqual([
        { type: "plan_approval", status: "pending" },
        { type: "question", status: "pending" },
      ]);
      await expect(
        submitRequest(db, actor, {
          type: "plan_approval",
          payload: { plan: "second" },
          idempotencyKey: "shared",
        }),
      ).rejects.toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
    },
  );
});
