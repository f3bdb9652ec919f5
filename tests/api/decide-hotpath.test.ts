import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { HumanActor } from "../../lib/auth/actor";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { getProtocolType } from "../../lib/protocol/registry";
import { tryDecideCommonRequest } from "../../lib/requests/common-decision";
import { createRequestInTransaction, decideRequestInFull } from "../../lib/requests/mutations";
import type { RespondInput } from "../../lib/requests/schema";
import type { RequestView } from "../../lib/requests/views";
import { inTransaction } from "../../lib/transaction";
import { signedInHuman } from "../route-client";
import { holdLock } from "../support/held-lock";
import { api, registerAgent, submitPlan, type TestAgent } from "./fixtures";

// `LOCK TABLE` holds every file's inserts into the table: on a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_decide_hotpath");
});

// The common decision is one statement that restates the full path's transaction for one Lead
// deciding a plan or a tool call as asked (decision 031). The first tests hold the two paths to the
// same rows, message and events; the rest change what the decision depends on behind its back.

const db = getDb();
afterAll(() => db.$disconnect());

const RISKY = { tool: "bash", args: { command: "rm -rf build" } };
const OTHER_RISKY = { tool: "bash", args: { command: "rm -rf dist" } };

const TOKEN_LEAD: HumanActor = {
  kind: "human",
  userId: "hotpath-lead",
  email: "hotpath-lead@example.com",
  name: "Lead",
  role: "lead",
  via: "token",
  tokenId: "00000000-0000-4000-8000-000000000031",
  tokenName: "decide hot path",
  scope: "decide",
};
const SESSION_LEAD: HumanActor = {
  kind: "human",
  userId: "hotpath-session-lead",
  email: "hotpath-session@example.com",
  name: "Session Lead",
  role: "lead",
  via: "session",
  sessionId: "hotpath-session",
  sessionKeyHash: "not a key: called in-process",
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function raiseToolApproval(agent: TestAgent, call = RISKY): Promise<string> {
  const asked = await api.toolCall(agent.headers, call);
  expect(asked.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
  return String(asked.json.requestId);
}

async function askQuestion(agent: TestAgent): Promise<void> {
  const asked = await api.submitRequest(agent.headers, {
    type: "question",
    payload: { question: "Which region?", options: [{ id: "eu", label: "Europe" }] },
  });
  expect(asked.status).toBe(201);
}

async function raisePlan(agent: TestAgent): Promise<string> {
  const submitted = await submitPlan(agent);
  expect(submitted.status).toBe(201);
  return String(submitted.json.id);
}

async function agentRow(agent: TestAgent) {
  return db.agent.findUniqueOrThrow({ where: { name: agent.name } });
}

/** What a decision's effects are read after: the agent's row, the newest event and message. */
async function readBefore(agent: TestAgent) {
  return {
    row: await agentRow(agent),
    lastEvent: (await db.event.aggregate({ _max: { id: true } }))._max.id ?? 0n,
    lastMessage: (await db.message.aggregate({ _max: { id: true } }))._max.id ?? 0n,
  };
}

/** Everything a decision writes or returns, with the ids that differ between two runs named. */
async function decideAndRead(
  decide: (...args: Parameters<typeof decideRequestInFull>) => Promise<RequestView | null>,
  lead: HumanActor,
  agent: TestAgent,
  requestId: string,
  input: RespondInput,
) {
  const before = await readBefore(agent);
  return readWritten(before, agent, requestId, await decide(db, lead, requestId, input));
}

/** What the decision of `requestId` returned and wrote since `before`, its ids named. */
async function readWritten(
  before: Awaited<ReturnType<typeof readBefore>>,
  agent: TestAgent,
  requestId: string,
  view: RequestView | null,
) {
  const { row, lastEvent, lastMessage } = before;
  if (!view) throw new Error(`${requestId} was not decided`);
  const request = await db.request.findUniqueOrThrow({
    where: { id: requestId },
    omit: { id: true, agentId: true, payload: true, createdAt: true, expiresAt: true },
  });
  const agentAfter = await db.agent.findUniqueOrThrow({
    where: { id: row.id },
    omit: { id: true, name: true, tokenHash: true, createdAt: true },
  });
  const messages = await db.message.findMany({
    where: { id: { gt: lastMessage }, OR: [{ agentId: row.id }, { recipient: agent.name }] },
    orderBy: { id: "asc" },
    omit: { createdAt: true },
  });
  const events = await db.event.findMany({
    where: {
      id: { gt: lastEvent },
      subject: { in: [`agent:${agent.name}`, `inbox:${agent.name}`, `request:${requestId}`] },
    },
    orderBy: { id: "asc" },
    select: { kind: true, subject: true, data: true },
  });
  const written = {
    view: { ...view, respondedAt: typeof view.respondedAt, createdAt: null, expiresAt: null },
    request: { ...request, respondedAt: request.respondedAt instanceof Date },
    agent: { ...agentAfter, updatedAt: agentAfter.updatedAt > row.updatedAt },
    messages,
    events,
  };
  const messageNames = new Map(
    messages.map((message, index) => [String(message.id), `MESSAGE${index}`]),
  );
  const names: [string, string][] = [
    [requestId, "REQUEST"],
    [row.id, "AGENT_ID"],
    [agent.name, "AGENT"],
  ];
  return JSON.parse(
    JSON.stringify(written, (_key, value: unknown) => {
      if (typeof value === "bigint" || typeof value === "number") {
        return messageNames.get(String(value)) ?? String(value);
      }
      if (typeof value !== "string") return value;
      return names.reduce((text, [id, name]) => text.replaceAll(id, name), value);
    }),
  ) as unknown;
}

type Case = {
  name: string;
  raise: (agent: TestAgent) => Promise<string>;
  input: RespondInput;
  /** The agent's status after the decision, both ways. */
  statusAfter?: string;
};

const CASES: Case[] = [
  {
    name: "a plan approved",
    raise: raisePlan,
    input: { type: "plan_approval_response", approve: true, feedback: "go" },
  },
  {
    name: "a plan rejected",
    raise: raisePlan,
    input: { type: "plan_approval_response", approve: false, feedback: "smaller steps" },
  },
  {
    name: "a tool call approved",
    raise: (agent) => raiseToolApproval(agent),
    input: { type: "tool_approval_response", approve: true },
  },
  {
    name: "a tool call rejected",
    raise: (agent) => raiseToolApproval(agent),
    input: { type: "tool_approval_response", approve: false, feedback: "not that" },
  },
  {
    name: "a tool call approved while another waits on the Lead",
    raise: async (agent) => {
      const first = await raiseToolApproval(agent);
      await raiseToolApproval(agent, OTHER_RISKY);
      return first;
    },
    input: { type: "tool_approval_response", approve: true },
    statusAfter: "waiting_approval",
  },
  // Red team: the agent was left `waiting_approval` (a tool call) or `working` (a plan) while
  // its question still waited on the Lead, and a heartbeat could then take it to `idle`.
  {
    name: "a tool call approved while the agent's question waits",
    raise: async (agent) => {
      await askQuestion(agent);
      return raiseToolApproval(agent);
    },
    input: { type: "tool_approval_response", approve: true },
    statusAfter: "waiting_answer",
  },
  {
    name: "a plan approved while the agent's question waits",
    raise: async (agent) => {
      const plan = await raisePlan(agent);
      await askQuestion(agent);
      return plan;
    },
    input: { type: "plan_approval_response", approve: true },
    statusAfter: "waiting_answer",
  },
];

describe("the common decision", () => {
  for (const { name, raise, input, statusAfter = "working" } of CASES) {
    it(`writes what the full path writes: ${name}`, async () => {
      for (const lead of [TOKEN_LEAD, SESSION_LEAD]) {
        const [common, full] = [await registerAgent(), await registerAgent()];
        const commonRequest = await raise(common);
        const fullRequest = await raise(full);
        const viaCommon = await decideAndRead(
          tryDecideCommonRequest,
          lead,
          common,
          commonRequest,
          input,
        );
        const viaFull = await decideAndRead(decideRequestInFull, lead, full, fullRequest, input);
        expect(viaCommon).toEqual(viaFull);
        expect((await agentRow(common)).status).toBe(statusAfter);
        expect(viaCommon).toMatchObject({
          request: { status: input.approve ? "approved" : "rejected" },
          events: [
            { kind: "agent.updated" },
            { kind: "message.sent" },
            { kind: "request.decided" },
          ],
        });
      }
    });
  }

  it("is the path a plain decision takes, and leaves anything else untouched", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const planId = await raisePlan(agent);
    const approve = { type: "plan_approval_response", approve: true } as const;
    const untouched = [
      tryDecideCommonRequest(db, TOKEN_LEAD, planId, { ...approve, editedPlan: "1. other" }),
      tryDecideCommonRequest(db, TOKEN_LEAD, planId, { ...approve, approve: false }),
      tryDecideCommonRequest(db, TOKEN_LEAD, planId, { ...approve, type: "shutdown_response" }),
      tryDecideCommonRequest(db, TOKEN_LEAD, planId, {
        type: "tool_approval_response",
        approve: true,
      }),
      tryDecideCommonRequest(db, { ...TOKEN_LEAD, role: "viewer" }, planId, approve),
      tryDecideCommonRequest(
        db,
        { kind: "agent", agentId: (await agentRow(agent)).id, name: agent.name, incarnation: 1 },
        planId,
        approve,
      ),
      tryDecideCommonRequest(db, TOKEN_LEAD, "req_missing", approve),
    ];
    expect(await Promise.all(untouched)).toEqual(untouched.map(() => null));
    expect(await db.request.findUniqueOrThrow({ where: { id: planId } })).toMatchObject({
      status: "pending",
    });
    expect(await tryDecideCommonRequest(db, TOKEN_LEAD, planId, approve)).toMatchObject({
      status: "approved",
      respondedBy: TOKEN_LEAD.email,
    });
  });
});

describe("the common decision under attack", () => {
  /** Holds the agent's row lock from another connection while `during` runs, then commits. */
  async function whileLocked<T>(
    agentId: string,
    start: () => Promise<T>,
    during: (holder: pg.Client) => Promise<void> = async () => undefined,
  ): Promise<T> {
    const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [agentId]);
      const started = start();
      await sleep(200);
      await during(holder);
      await holder.query("COMMIT");
      return await started;
    } finally {
      await holder.end();
    }
  }

  it("two Leads racing: exactly one wins, the other gets ALREADY_DECIDED with the winner", async () => {
    const [first, second] = [await signedInHuman("lead"), await signedInHuman("lead")];
    const agent = await registerAgent({ requirePlan: true });
    const requestId = await raisePlan(agent);
    const outcomes = await whileLocked((await agentRow(agent)).id, () =>
      Promise.all([
        api.respond(first.headers, requestId, { type: "plan_approval_response", approve: true }),
        api.respond(second.headers, requestId, {
          type: "plan_approval_response",
          approve: false,
          feedback: "no",
        }),
      ]),
    );
    const statuses = outcomes.map((outcome) => outcome.status).sort();
    expect(statuses).toEqual([200, 409]);
    const winner = outcomes.find((outcome) => outcome.status === 200)!;
    const loser = outcomes.find((outcome) => outcome.status === 409)!;
    expect(loser.json).toMatchObject({
      error: {
        code: "ALREADY_DECIDED",
        request: { status: winner.json.status, decidedBy: winner.json.decidedBy },
      },
    });
    expect(
      await db.event.count({ where: { subject: `request:${requestId}`, kind: "request.decided" } }),
    ).toBe(1);
    expect(
      await db.message.count({
        where: { recipient: agent.name, metadata: { path: ["requestId"], equals: requestId } },
      }),
    ).toBe(1);
  });

  it("a decision for an incarnation that ended while it waited: STALE_INCARNATION, nothing decided", async () => {
    const lead = await signedInHuman("lead");
    const agent = await registerAgent();
    const requestId = await raiseToolApproval(agent);
    const row = await agentRow(agent);
    const outcome = await whileLocked(
      row.id,
      () => api.respond(lead.headers, requestId, { type: "tool_approval_response", approve: true }),
      async (holder) => {
        await holder.query("UPDATE agents SET incarnation = incarnation + 1 WHERE id = $1", [
          row.id,
        ]);
      },
    );
    expect(outcome).toMatchObject({ status: 409, json: { error: { code: "STALE_INCARNATION" } } });
    expect(await db.request.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({
      status: "pending",
      decidedBy: null,
    });
    expect(
      await db.message.count({ where: { agentId: row.id, type: "tool_approval_response" } }),
    ).toBe(0);
  });

  it("a decision for work the agent has left: STALE_WORK_VERSION, the gate untouched", async () => {
    const lead = await signedInHuman("lead");
    const agent = await registerAgent({ requirePlan: true });
    const requestId = await raisePlan(agent);
    await db.agent.update({
      where: { name: agent.name },
      data: { workVersion: { increment: 1 } },
    });
    const outcome = await api.respond(lead.headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(outcome).toMatchObject({ status: 409, json: { error: { code: "STALE_WORK_VERSION" } } });
    expect(await agentRow(agent)).toMatchObject({ gate: "pending" });
  });

  it("a decision after the deadline: REQUEST_EXPIRED, the timeout policy applied once", async () => {
    const lead = await signedInHuman("lead");
    const agent = await registerAgent({ requirePlan: true });
    const requestId = await raisePlan(agent);
    await db.$executeRaw`
      UPDATE requests SET expires_at = now() - interval '1 second' WHERE id = ${requestId}`;
    const outcome = await api.respond(lead.headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(outcome).toMatchObject({
      status: 409,
      json: { error: { code: "REQUEST_EXPIRED", request: { status: "expired" } } },
    });
    expect(await agentRow(agent)).toMatchObject({ gate: "rejected" });
  });

  it("a deadline moved past while the decision waits on the lock: REQUEST_EXPIRED", async () => {
    const lead = await signedInHuman("lead");
    const agent = await registerAgent({ requirePlan: true });
    const requestId = await raisePlan(agent);
    const outcome = await whileLocked(
      (await agentRow(agent)).id,
      () => api.respond(lead.headers, requestId, { type: "plan_approval_response", approve: true }),
      async (holder) => {
        await holder.query(
          "UPDATE requests SET expires_at = now() - interval '1 second' WHERE id = $1",
          [requestId],
        );
      },
    );
    expect(outcome).toMatchObject({
      status: 409,
      json: { error: { code: "REQUEST_EXPIRED", request: { status: "expired" } } },
    });
    expect(
      await db.event.count({ where: { subject: `request:${requestId}`, kind: "request.decided" } }),
    ).toBe(0);
  });

  it("a request that needs two Leads is not decided by one Lead's approval", async () => {
    const lead = await signedInHuman("lead");
    const agent = await registerAgent({ requirePlan: true });
    const row = await agentRow(agent);
    const { request } = await inTransaction(db, (tx) =>
      createRequestInTransaction(tx, {
        definition: getProtocolType("plan_approval"),
        direction: "agent_to_lead",
        agentId: row.id,
        payload: { plan: "1. deploy" },
        senderIncarnation: row.incarnation,
        requiredApprovals: 2,
      }),
    );
    const approve = { type: "plan_approval_response", approve: true } as const;
    expect(await tryDecideCommonRequest(db, TOKEN_LEAD, request.id, approve)).toBeNull();
    const outcome = await api.respond(lead.headers, request.id, approve);
    expect(outcome).toMatchObject({ status: 200, json: { status: "pending" } });
    expect(outcome.json.approvals).toHaveLength(1);
    expect(await agentRow(agent)).toMatchObject({ gate: "pending" });
  });

  it("an agent that agreed to stop is left to the full path, which keeps it stopping", async () => {
    const lead = await signedInHuman("lead");
    const agent = await registerAgent();
    const requestId = await raiseToolApproval(agent);
    await db.agent.update({ where: { name: agent.name }, data: { status: "stopping" } });
    const approve = { type: "tool_approval_response", approve: true } as const;
    expect(await tryDecideCommonRequest(db, TOKEN_LEAD, requestId, approve)).toBeNull();
    expect(await db.request.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({
      status: "pending",
    });
    const outcome = await api.respond(lead.headers, requestId, approve);
    expect(outcome).toMatchObject({ status: 200, json: { status: "approved" } });
    expect(await agentRow(agent)).toMatchObject({ status: "stopping" });
  });
});

describe("decisions committed in groups (decision 054)", () => {
  const settle = () => sleep(300);
  // Long enough for decisions sent at once to reach the group behind the held commit, on a busy CI.
  const untilQueued = () => sleep(1_000);
  const approve = { type: "plan_approval_response", approve: true } as const;

  /**
   * Holds the commit under way (one at a time, decision 087): a decision commits alone and waits
   * to write its agent's message. Those sent next wait for it, as one group.
   */
  async function holdCommitUnderWay() {
    const requestId = await raisePlan(await registerAgent());
    const lock = await holdLock("LOCK TABLE messages IN SHARE MODE");
    const held = tryDecideCommonRequest(db, TOKEN_LEAD, requestId, approve);
    await settle();
    return {
      /** Lets the held decision commit; the id of its request, in a list as `writersOf` takes. */
      release: async () => {
        await lock.release();
        expect(await held).not.toBeNull();
        return [requestId];
      },
    };
  }

  /** The transaction that wrote each request's decision. */
  async function writersOf(requestIds: string[]): Promise<string[]> {
    const rows = await db.$queryRaw<{ id: string; writer: string }[]>`
      SELECT id, xmin::text AS writer FROM requests WHERE id = ANY(${requestIds}::text[])`;
    const writerOf = new Map(rows.map((row) => [row.id, row.writer]));
    return requestIds.map((id) => writerOf.get(id) ?? "none");
  }

  it("commits the decisions that came while a commit was under way together, each as the full path would", async () => {
    const raised = await Promise.all(
      CASES.map(async (decisionCase) => {
        const [grouped, full] = [await registerAgent(), await registerAgent()];
        return {
          ...decisionCase,
          grouped,
          full,
          groupedRequest: await decisionCase.raise(grouped),
          fullRequest: await decisionCase.raise(full),
        };
      }),
    );
    const befores = await Promise.all(raised.map(({ grouped }) => readBefore(grouped)));
    const held = await holdCommitUnderWay();
    const inGroup = Promise.all(
      raised.map(({ groupedRequest, input }) =>
        tryDecideCommonRequest(db, TOKEN_LEAD, groupedRequest, input),
      ),
    );
    await untilQueued();
    const aloneIds = await held.release();
    const views = await inGroup;
    const groupedIds = raised.map(({ groupedRequest }) => groupedRequest);
    const writers = await writersOf(groupedIds);
    expect(new Set(writers).size).toBe(1);
    expect(await writersOf(aloneIds)).not.toContain(writers[0]);
    for (const [index, { grouped, full, groupedRequest, fullRequest, input }] of raised.entries()) {
      const viaGroup = await readWritten(befores[index]!, grouped, groupedRequest, views[index]!);
      const viaFull = await decideAndRead(
        decideRequestInFull,
        TOKEN_LEAD,
        full,
        fullRequest,
        input,
      );
      expect(viaGroup).toEqual(viaFull);
    }
  });

  it("skips an agent another transaction holds, without waiting: that decision takes the full path", async () => {
    const [free, held] = [await registerAgent(), await registerAgent()];
    const [freeRequest, heldRequest] = [await raisePlan(free), await raisePlan(held)];
    const rowLock = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [
      (await agentRow(held)).id,
    ]);
    try {
      const commits = await holdCommitUnderWay();
      const inGroup = Promise.all([
        tryDecideCommonRequest(db, TOKEN_LEAD, heldRequest, approve),
        tryDecideCommonRequest(db, TOKEN_LEAD, freeRequest, approve),
      ]);
      await untilQueued();
      await commits.release();
      // Answered while the held agent's row is still held: skipped, not waited for.
      const [fromHeld, fromFree] = await inGroup;
      expect(fromHeld).toBeNull();
      expect(fromFree).toMatchObject({ status: "approved" });
    } finally {
      await rowLock.release();
    }
    expect(await db.request.findUniqueOrThrow({ where: { id: heldRequest } })).toMatchObject({
      status: "pending",
    });
    const outcome = await api.respond((await signedInHuman("lead")).headers, heldRequest, approve);
    expect(outcome).toMatchObject({ status: 200, json: { status: "approved" } });
  });

  it("decides two calls of one agent in one group as one after the other; the same request once", async () => {
    const agent = await registerAgent();
    const first = await raiseToolApproval(agent);
    const second = await raiseToolApproval(agent, OTHER_RISKY);
    const toolApprove = { type: "tool_approval_response", approve: true } as const;
    const before = await readBefore(agent);
    const commits = await holdCommitUnderWay();
    const inGroup = Promise.all([
      tryDecideCommonRequest(db, TOKEN_LEAD, first, toolApprove),
      tryDecideCommonRequest(db, TOKEN_LEAD, second, toolApprove),
      tryDecideCommonRequest(db, TOKEN_LEAD, first, toolApprove),
    ]);
    await untilQueued();
    await commits.release();
    const [fromFirst, fromSecond, again] = await inGroup;
    expect([fromFirst?.status, fromSecond?.status, again]).toEqual(["approved", "approved", null]);
    expect(new Set(await writersOf([first, second])).size).toBe(1);
    // While the second call still waited on the Lead the agent did too; then it worked.
    const updates = await db.event.findMany({
      where: { id: { gt: before.lastEvent }, subject: `agent:${agent.name}` },
      orderBy: { id: "asc" },
    });
    expect(updates.map((event) => (event.data as { status: string }).status)).toEqual([
      "waiting_approval",
      "working",
    ]);
    expect(
      await db.message.count({ where: { agentId: before.row.id, id: { gt: before.lastMessage } } }),
    ).toBe(2);
    const repeated = await api.respond((await signedInHuman("lead")).headers, first, toolApprove);
    expect(repeated).toMatchObject({ status: 409, json: { error: { code: "ALREADY_DECIDED" } } });
  });

  for (const { change, update, refusal } of [
    {
      change: "its deadline moves past",
      update: "UPDATE requests SET expires_at = now() - interval '1 second' WHERE id = $1",
      refusal: { status: 409, json: { error: { code: "REQUEST_EXPIRED" } } },
    },
    {
      change: "a rule asks two Leads",
      update: "UPDATE requests SET required_approvals = 2 WHERE id = $1",
      refusal: { status: 200, json: { status: "pending", approvals: [{}] } },
    },
  ]) {
    it(`skips a request another transaction holds, without waiting, and ${change} there: the full path judges it`, async () => {
      // Older than the request, as the two-person rule requires of a Lead who approves it.
      const lead = await signedInHuman("lead");
      const [victim, innocent] = [await registerAgent(), await registerAgent()];
      const [victimRequest, innocentRequest] = [await raisePlan(victim), await raisePlan(innocent)];
      const holder = await holdLock("SELECT 1 FROM requests WHERE id = $1 FOR UPDATE", [
        victimRequest,
      ]);
      try {
        const commits = await holdCommitUnderWay();
        const inGroup = Promise.all([
          tryDecideCommonRequest(db, TOKEN_LEAD, victimRequest, approve),
          tryDecideCommonRequest(db, TOKEN_LEAD, innocentRequest, approve),
        ]);
        await untilQueued();
        await commits.release();
        // Answered while the victim's row is still held: skipped, not waited for.
        const [fromVictim, fromInnocent] = await inGroup;
        expect(fromVictim).toBeNull();
        expect(fromInnocent).toMatchObject({ status: "approved" });
        await holder.query(update, [victimRequest]);
      } finally {
        await holder.release();
      }
      expect(await api.respond(lead.headers, victimRequest, approve)).toMatchObject(refusal);
    });
  }

  it("never waits on a request, so a writer locking two in the other order cannot deadlock it or send it to the full path", async () => {
    const [x, y] = [await registerAgent(), await registerAgent()];
    const [rx, ry] = [await raiseToolApproval(x), await raiseToolApproval(y)];
    const toolApprove = { type: "tool_approval_response", approve: true } as const;
    const holder = await holdLock("SELECT 1 FROM requests WHERE id = $1 FOR UPDATE", [ry]);
    try {
      const commits = await holdCommitUnderWay();
      const inGroup = Promise.all([
        tryDecideCommonRequest(db, TOKEN_LEAD, rx, toolApprove),
        tryDecideCommonRequest(db, TOKEN_LEAD, ry, toolApprove),
      ]);
      await untilQueued();
      await commits.release();
      await settle();
      // What a two-Lead rule's update of the pending cards it matches does, in the other order.
      await holder.query("SELECT 1 FROM requests WHERE id = $1 FOR UPDATE", [rx]);
      await holder.release();
      // Decided in the group, not by the full path after a deadlock rolled the group back.
      const [fromX, fromY] = await inGroup;
      expect([fromX?.status, fromY]).toEqual(["approved", null]);
    } finally {
      await holder.release();
    }
    const lead = await signedInHuman("lead");
    const outcomes = [
      { status: 200, json: await db.request.findUniqueOrThrow({ where: { id: rx } }) },
      await api.respond(lead.headers, ry, toolApprove),
    ];
    expect(outcomes.map((outcome) => [outcome.status, outcome.json.status])).toEqual([
      [200, "approved"],
      [200, "approved"],
    ]);
  });

  it("sends a group PostgreSQL rolls back for a deadlock to the full path: a table lock, as a migration takes", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const requestId = await raisePlan(agent);
    const holder = await holdLock("LOCK TABLE messages IN SHARE MODE");
    try {
      const decided = tryDecideCommonRequest(db, TOKEN_LEAD, requestId, approve);
      await settle();
      // The group holds the agent's row and waits for the table; now the holder waits for the row.
      await holder.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [
        (await agentRow(agent)).id,
      ]);
      await holder.release();
      expect(await decided).toBeNull();
    } finally {
      await holder.release();
    }
    expect(await db.request.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({
      status: "pending",
    });
    const outcome = await api.respond((await signedInHuman("lead")).headers, requestId, approve);
    expect(outcome).toMatchObject({ status: 200, json: { status: "approved" } });
  });

  it("sends every decision of a group to the full path when one carries a value PostgreSQL refuses", async () => {
    const [refused, good] = [await registerAgent(), await registerAgent()];
    const [refusedRequest, goodRequest] = [await raisePlan(refused), await raisePlan(good)];
    const commits = await holdCommitUnderWay();
    const inGroup = Promise.all([
      tryDecideCommonRequest(db, TOKEN_LEAD, refusedRequest, {
        type: "plan_approval_response",
        approve: false,
        feedback: "no\u0000",
      }),
      tryDecideCommonRequest(db, TOKEN_LEAD, goodRequest, approve),
    ]);
    await untilQueued();
    await commits.release();
    expect(await inGroup).toEqual([null, null]);
    expect(
      await db.request.count({
        where: { id: { in: [refusedRequest, goodRequest] }, status: "pending" },
      }),
    ).toBe(2);
    const outcome = await api.respond((await signedInHuman("lead")).headers, goodRequest, approve);
    expect(outcome).toMatchObject({ status: 200, json: { status: "approved" } });
  });
});
