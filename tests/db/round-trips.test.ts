import { randomBytes } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveActor, type Actor, type AgentActor, type HumanActor } from "../../lib/auth/actor";
import { lockAgent } from "../../lib/agents/data";
import { registerAgent } from "../../lib/agents/mutations";
import { requireDatabaseUrl } from "../../lib/env";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { getProtocolType } from "../../lib/protocol/registry";
import {
  createRequestInTransaction,
  decideRequest,
  decideRequestInFull,
  submitRequest,
} from "../../lib/requests/mutations";
import { recordToolCall } from "../../lib/tool-calls/mutations";
import { inTransaction } from "../../lib/transaction";
import { createApiToken } from "../../lib/tokens/mutations";
import { registerAgentActor } from "../support/agent-actor";

// A mutation's cost is mostly the client work around each statement (docs/PERFORMANCE.md), so the
// number of statements the two hottest mutations send is held here: a new per-row event insert,
// a second lock, or a re-read shows up as a failing count, not as a slower benchmark weeks later.
const statements: string[] = [];
const db = new PrismaClient({
  adapter: new PrismaPg({ connectionString: requireDatabaseUrl(), max: 2 }),
  log: [{ emit: "event", level: "query" }],
});
db.$on("query", (event) => statements.push(event.query));

const lead: HumanActor = {
  kind: "human",
  userId: "round-trips-lead",
  email: "lead@example.com",
  name: "Lead",
  role: "lead",
  via: "token",
  tokenId: "00000000-0000-4000-8000-000000000000",
  tokenName: "round trips",
  scope: "admin",
};
let agent: AgentActor;

beforeAll(async () => {
  agent = await registerAgentActor(db, "rt", { requirePlan: true });
});
afterAll(() => db.$disconnect());

async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await work();
  return statements.filter((query) => !/^(BEGIN|COMMIT)\b/i.test(query));
}

const plan = (text: string) => ({ type: "plan_approval", payload: { plan: text } });

describe("statements per mutation", () => {
  it("a worker's plan that supersedes the pending one: one statement (decision 030)", async () => {
    await submitRequest(db, agent, plan("first"));
    const sent = await statementsOf(() =>
      submitRequest(db, agent, { ...plan("second"), idempotencyKey: "second" }),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain("INSERT INTO events");
  });

  it("the full path's plan: lock, find, supersede, find a rejected twin, insert, update, message, events", async () => {
    const sent = await statementsOf(() =>
      inTransaction(db, (tx) =>
        createRequestInTransaction(tx, {
          definition: getProtocolType("plan_approval"),
          direction: "agent_to_lead",
          agentId: agent.agentId,
          payload: { plan: "full path" },
          senderIncarnation: agent.incarnation,
        }),
      ),
    );
    expect(sent).toHaveLength(8);
    expect(sent.filter((query) => query.includes('INSERT INTO "public"."events"'))).toHaveLength(1);
  });

  it("a decision in full: read, lock, compare-and-set, what else waits, update, message, events", async () => {
    const { request } = await submitRequest(db, agent, plan("third"));
    const sent = await statementsOf(() =>
      decideRequestInFull(db, lead, request.id, { type: "plan_approval_response", approve: true }),
    );
    // What else of the agent's waits on the Lead sets the status it is left in (a question's).
    expect(sent).toHaveLength(7);
    expect(sent.filter((query) => query.includes('INSERT INTO "public"."events"'))).toHaveLength(1);
  });

  it("the common decision, one Lead approving or rejecting as asked: one statement, no transaction", async () => {
    for (const [text, decision] of [
      ["approved as asked", { approve: true }],
      ["rejected as asked", { approve: false, feedback: "smaller steps" }],
    ] as const) {
      const { request } = await submitRequest(db, agent, plan(text));
      const sent = await statementsOf(() =>
        decideRequest(db, lead, request.id, { type: "plan_approval_response", ...decision }),
      );
      expect(sent).toEqual([expect.stringContaining("decide_common_requests(")]);
      expect(statements).toHaveLength(1);
    }
  });

  it("writes a transaction's events in the order they were appended, and only if it commits", async () => {
    const before = await newestEventId();
    const { request } = await submitRequest(db, agent, plan("fourth"));
    expect(await eventsOfAgentSince(before)).toEqual([
      { kind: "agent.updated", subject: `agent:${agent.name}` },
      { kind: "message.sent", subject: "inbox:lead" },
      { kind: "request.created", subject: `request:${request.id}` },
    ]);

    const afterCommit = await newestEventId();
    const rolledBack = inTransaction(db, async (tx) => {
      await createRequestInTransaction(tx, {
        definition: getProtocolType("plan_approval"),
        direction: "agent_to_lead",
        agentId: agent.agentId,
        payload: { plan: "rolled back" },
      });
      throw new Error("abort");
    });
    await expect(rolledBack).rejects.toThrow("abort");
    expect(await eventsOfAgentSince(afterCommit)).toEqual([]);
  });
});

async function newestEventId(): Promise<bigint> {
  return (await db.event.aggregate({ _max: { id: true } }))._max.id ?? 0n;
}

/** Other test files write events at the same time; keep the ones about this agent's work. */
async function eventsOfAgentSince(after: bigint) {
  const events = await db.event.findMany({
    where: { id: { gt: after } },
    orderBy: { id: "asc" },
    select: { kind: true, subject: true, data: true },
  });
  return events
    .filter(
      (event) =>
        (event.data as { agent?: unknown; from?: unknown }).agent === agent.name ||
        (event.data as { from?: unknown }).from === agent.name,
    )
    .map(({ kind, subject }) => ({ kind, subject }));
}

describe("lockAgent", () => {
  it("reads in its one locking statement exactly what findUnique reads", async () => {
    await db.agent.update({
      where: { id: agent.agentId },
      data: { worker: { model: "scripted" }, lastHeartbeatAt: new Date(), inboxAckedId: 12n },
    });
    const sent = await statementsOf(() =>
      inTransaction(db, async (tx) => {
        expect(await lockAgent(tx, agent.agentId)).toEqual(
          await tx.agent.findUniqueOrThrow({ where: { id: agent.agentId } }),
        );
      }),
    );
    // The lock, and the comparison's own read.
    expect(sent).toHaveLength(2);
    expect(sent[0]).toContain("FOR UPDATE");
  });
});

describe("resolving a bearer token", () => {
  it("looks a Lead API token up in the API tokens first", async () => {
    const user = await db.user.create({
      data: {
        id: `rt-lead-${randomBytes(4).toString("hex")}`,
        name: "Round Trips",
        email: `rt-${randomBytes(4).toString("hex")}@example.com`,
        role: "lead",
      },
    });
    const { token } = await createApiToken(db, user.id, { name: "round trips", scope: "admin" });
    let actor: Actor | null = null;
    const sent = await statementsOf(async () => {
      actor = await resolveActor(db, new Headers({ authorization: `Bearer ${token}` }));
    });
    expect(actor).toMatchObject({ kind: "human", userId: user.id, role: "lead" });
    expect(sent.some((query) => query.includes('FROM "public"."agents"'))).toBe(false);
  });

  it("still finds an agent's token, whose prefix is its own", async () => {
    const { token } = await registerAgent(db, {
      name: `rt-${randomBytes(4).toString("hex")}`,
      role: "tester",
    });
    let actor: Actor | null = null;
    const sent = await statementsOf(async () => {
      actor = await resolveActor(db, new Headers({ authorization: `Bearer ${token}` }));
    });
    expect(actor).toMatchObject({ kind: "agent" });
    expect(sent).toHaveLength(1);
  });
});

describe("a gate verdict", () => {
  it("a read-only call: its agent's row read once on this node, then one statement each, no transaction", async () => {
    const caller = await registerAgentActor(db, "rt");
    const call = { tool: "read_file", args: { path: "README.md" } };
    // Rules are read from the table here: no eviction listener runs in tests, so no rule cache.
    const sentFor = async () => {
      let verdict: unknown;
      const sent = await statementsOf(async () => {
        verdict = await recordToolCall(db, caller, call);
      });
      expect(verdict).toEqual({ allowed: true });
      return sent.filter((query) => !query.includes('FROM "public"."rules"'));
    };
    expect(await sentFor()).toEqual([
      expect.stringContaining("connector_key IS NOT NULL AS is_connected"),
      expect.stringContaining("INSERT INTO events"),
    ]);
    expect(await sentFor()).toEqual([expect.stringContaining("INSERT INTO events")]);
  });

  it("a call an allow rule lets through, of an agent the gate has judged before: one statement", async () => {
    const name = `rt-${randomBytes(4).toString("hex")}`;
    await registerAgent(db, { name, role: "tester" });
    const row = await db.agent.update({ where: { name }, data: { gate: "approved" } });
    const caller: AgentActor = {
      kind: "agent",
      agentId: row.id,
      name,
      incarnation: row.incarnation,
    };
    const rule = await db.rule.create({
      data: {
        pattern: "bash(git push origin main)",
        effect: "allow",
        scope: { kind: "agent", agent: name },
        createdBy: "round trips",
      },
    });
    const call = { tool: "bash", args: { command: "git push origin main" } };
    await recordToolCall(db, caller, call);
    statements.length = 0;
    expect(await recordToolCall(db, caller, call)).toEqual({
      allowed: true,
      requestId: expect.any(String),
      ruleId: rule.id,
    });
    expect(statements.filter((query) => !query.includes('FROM "public"."rules"'))).toEqual([
      expect.stringContaining("INSERT INTO requests"),
    ]);
    await db.rule.delete({ where: { id: rule.id } });
  });
});
