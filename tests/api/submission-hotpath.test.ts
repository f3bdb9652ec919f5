import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { AgentActor } from "../../lib/auth/actor";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { getProtocolType } from "../../lib/protocol/registry";
import { trySubmitCommonPlan } from "../../lib/requests/common-submission";
import { createRequestInTransaction, submitRequest } from "../../lib/requests/mutations";
import { inTransaction } from "../../lib/transaction";
import { holdLock } from "../support/held-lock";
import { api, lead, registerAgent, submitPlan } from "./fixtures";

// `LOCK TABLE` holds every file's inserts into the table: on a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_submission_hotpath");
});

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

/**
 * Another type's request under the idempotency key "shared", inserted and not yet committed: it
 * leaves the agent row as it was, so only the unique key can tell. A statement's snapshot misses
 * it, and the statement's insert under that key waits for it.
 */
function holdQuestionUnderSharedKey(actor: AgentActor) {
  return holdLock(
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

  it("writes nothing while a decision holds the agent's row, and leaves it to the full path", async () => {
    const actor = await newActor();
    const { request: first } = await commonPath(actor, { plan: "Drop the table" });
    const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [actor.agentId]);
      // Its snapshot still shows the plan pending and no rejection to be asked again after.
      const skipped = trySubmitCommonPlan(db, actor, planApproval, { plan: "drop the table" }, {});
      // Answered while the row is held: skipped, not waited for (decision 053).
      expect(await skipped).toBeNull();
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
    "rolls back whole when a request under its idempotency key commits while its insert waits (%s)",
    async (_, client) => {
      const actor = await newActor();
      await commonPath(actor, { plan: "first" });
      const conflicting = await holdQuestionUnderSharedKey(actor);
      try {
        let isAnswered = false;
        const waiting = trySubmitCommonPlan(
          client,
          actor,
          planApproval,
          { plan: "second" },
          { idempotencyKey: "shared" },
        ).finally(() => (isAnswered = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(isAnswered).toBe(false);
        await conflicting.release();
        expect(await waiting).toBeNull();
      } finally {
        await conflicting.release();
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

describe("plans committed in groups (decision 053)", () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  // Long enough for plans sent at once to reach the group behind the held commit, on a busy CI.
  const untilQueued = () => new Promise((resolve) => setTimeout(resolve, 1_000));

  /**
   * Holds the commit under way (one at a time, decision 087): a plan commits alone and waits to
   * write the Lead's message. Those sent next wait for it, as one group.
   */
  async function holdCommitUnderWay() {
    const lock = await holdLock("LOCK TABLE messages IN SHARE MODE");
    const held = trySubmitCommonPlan(db, await newActor(), planApproval, { plan: "alone" }, {});
    await settle();
    return {
      /** Lets the held plan commit; the id of its request, in a list as `writersOf` takes. */
      release: async () => {
        await lock.release();
        const alone = await held;
        expect(alone).not.toBeNull();
        return [alone?.request.id ?? "none"];
      },
    };
  }

  /** The transaction that wrote each request. */
  async function writersOf(requestIds: string[]): Promise<string[]> {
    const rows = await db.$queryRaw<{ id: string; writer: string }[]>`
      SELECT id, xmin::text AS writer FROM requests WHERE id = ANY(${requestIds}::text[])`;
    const writerOf = new Map(rows.map((row) => [row.id, row.writer]));
    return requestIds.map((id) => writerOf.get(id) ?? "none");
  }

  const submit = (actor: AgentActor, plan: string, idempotencyKey?: string) =>
    trySubmitCommonPlan(db, actor, planApproval, { plan }, { idempotencyKey });

  it("commits the plans that came while a commit was under way together, each as it would alone", async () => {
    const grouped = [await newActor(), await newActor(), await newActor()];
    const twin = await newActor();
    for (const actor of [...grouped, twin]) await commonPath(actor, { plan: "first" });
    const held = await holdCommitUnderWay();
    const inGroup = Promise.all(grouped.map((actor) => submit(actor, "second", "k2")));
    await untilQueued();
    const aloneIds = await held.release();
    const created = await inGroup;
    const ids = created.map((answer) => answer?.request.id ?? "none");
    const writers = await writersOf(ids);
    expect(new Set(writers).size).toBe(1);
    expect(await writersOf(aloneIds)).not.toContain(writers[0]);
    // Each grouped agent's answer, rows and events are what the same plans give alone, in order.
    const answerAlone = await commonPath(twin, { plan: "second", idempotencyKey: "k2" });
    const writtenAlone = await writtenBy(twin);
    for (const [index, actor] of grouped.entries()) {
      expect(comparableAnswer(created[index]!, actor)).toEqual(comparableAnswer(answerAlone, twin));
      expect(await writtenBy(actor)).toEqual(writtenAlone);
    }
  });

  it("writes one plan per agent; the agent's next plan in the group takes the full path after it", async () => {
    const actor = await newActor();
    const held = await holdCommitUnderWay();
    const inGroup = Promise.all([submit(actor, "one"), submit(actor, "two")]);
    await untilQueued();
    await held.release();
    const [one, two] = await inGroup;
    expect(one).not.toBeNull();
    expect(two).toBeNull();
    const again = await submitRequest(db, actor, {
      type: "plan_approval",
      payload: { plan: "two" },
    });
    const requests = await db.request.findMany({
      where: { agentId: actor.agentId },
      orderBy: { createdAt: "asc" },
      select: { id: true, status: true },
    });
    expect(requests).toEqual([
      { id: one?.request.id, status: "superseded" },
      { id: again.request.id, status: "pending" },
    ]);
  });

  it("holds each plan of a group to its own agent's row: respawned, stopping, held by another", async () => {
    const [good, stale, stopping, held] = [
      await newActor(),
      await newActor(),
      await newActor(),
      await newActor(),
    ];
    const respawned = { ...stale, incarnation: stale.incarnation - 1 };
    await db.agent.update({ where: { id: stopping.agentId }, data: { status: "stopping" } });
    const rowLock = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [held.agentId]);
    try {
      const commit = await holdCommitUnderWay();
      const inGroup = Promise.all([
        submit(good, "good"),
        submit(respawned, "stale"),
        submit(stopping, "stopping"),
        submit(held, "held"),
      ]);
      await untilQueued();
      await commit.release();
      // Answered while the held agent's row is still held: skipped, not waited for.
      const [fromGood, ...refused] = await inGroup;
      expect(fromGood).not.toBeNull();
      expect(refused).toEqual([null, null, null]);
    } finally {
      await rowLock.release();
    }
    const agentIds = [stale, stopping, held].map((actor) => actor.agentId);
    expect(await db.request.count({ where: { agentId: { in: agentIds } } })).toBe(0);
    expect(await db.request.count({ where: { agentId: good.agentId } })).toBe(1);
  });

  it("rolls the whole group back when one plan's idempotency key is taken meanwhile; each takes the full path", async () => {
    const [victim, innocent] = [await newActor(), await newActor()];
    const conflicting = await holdQuestionUnderSharedKey(victim);
    try {
      const held = await holdCommitUnderWay();
      const inGroup = Promise.all([submit(victim, "mine", "shared"), submit(innocent, "other")]);
      await untilQueued();
      await held.release();
      await settle();
      await conflicting.release();
      expect(await inGroup).toEqual([null, null]);
    } finally {
      await conflicting.release();
    }
    expect(await db.request.count({ where: { agentId: innocent.agentId } })).toBe(0);
    const other = await submitRequest(db, innocent, {
      type: "plan_approval",
      payload: { plan: "other" },
    });
    expect(other.isCreated).toBe(true);
    await expect(
      submitRequest(db, victim, {
        type: "plan_approval",
        payload: { plan: "mine" },
        idempotencyKey: "shared",
      }),
    ).rejects.toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
  });

  // The plan's 200th UTF-16 unit is the first half of an emoji: a summary cut there is not text
  // PostgreSQL's jsonb takes. Well formed at the door; the server makes the summary.
  const halfAnEmojiAtTheCut = "a".repeat(199) + "\u{1F600}";

  it("takes a plan whose summary would end in half a character, alone and in a group", async () => {
    const [alone, grouped, innocent] = [
      await registerAgent({ requirePlan: true }),
      await registerAgent({ requirePlan: true }),
      await registerAgent({ requirePlan: true }),
    ];
    expect((await submitPlan(alone, halfAnEmojiAtTheCut)).status).toBe(201);
    const held = await holdCommitUnderWay();
    const inGroup = Promise.all([
      submitPlan(grouped, halfAnEmojiAtTheCut),
      submitPlan(innocent, "an honest plan"),
    ]);
    await untilQueued();
    await held.release();
    const answers = await inGroup;
    expect(answers.map((answer) => answer.status)).toEqual([201, 201]);
    const summaries = await db.message.findMany({
      where: { sender: { in: [alone.name, grouped.name] } },
      select: { content: true },
    });
    expect(summaries).toEqual([{ content: "a".repeat(199) }, { content: "a".repeat(199) }]);
  });

  it("sends every plan of a group to the full path when one carries a value PostgreSQL refuses", async () => {
    const [refused, innocent] = [await newActor(), await newActor()];
    const held = await holdCommitUnderWay();
    // In process, past the API's door, which refuses an unpaired surrogate with 400.
    const inGroup = Promise.allSettled([
      submitRequest(db, refused, { type: "plan_approval", payload: { plan: "\uD800 alone" } }),
      submitRequest(db, innocent, { type: "plan_approval", payload: { plan: "an honest plan" } }),
    ]);
    await untilQueued();
    await held.release();
    const [fromRefused, fromInnocent] = await inGroup;
    expect(fromRefused.status).toBe("rejected");
    expect(fromInnocent).toMatchObject({ status: "fulfilled", value: { isCreated: true } });
    expect(await db.request.count({ where: { agentId: refused.agentId } })).toBe(0);
    expect(await db.request.count({ where: { agentId: innocent.agentId } })).toBe(1);
  });
});
