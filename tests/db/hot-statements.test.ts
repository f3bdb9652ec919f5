import { randomBytes } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { resolveActor, type HumanActor } from "../../lib/auth/actor";
import { registerAgent } from "../../lib/agents/mutations";
import { createDb, poolOf } from "../../lib/db";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { requireDatabaseUrl } from "../../lib/env";
import { applyMigrations } from "../../lib/migrations";
import { sendMessage } from "../../lib/messages/mutations";
import { readInbox } from "../../lib/messages/data";
import { LEAD_WAITING_STATUSES } from "../../lib/protocol/registry";
import { EventHub } from "../../lib/realtime/event-hub";
import {
  COMMON_VERDICTS_SQL,
  RULE_ALLOWED_VERDICTS_SQL,
} from "../../lib/tool-calls/common-verdict";
import { recordToolCall } from "../../lib/tool-calls/mutations";
import {
  agentStatusSchema,
  gateStateSchema,
  type AgentStatus,
  type GateState,
} from "../../lib/shared/agents/schema";
import { registerAgentActor } from "../support/agent-actor";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

const LEAD: HumanActor = {
  kind: "human",
  userId: "hot-statements-lead",
  email: "lead@example.com",
  name: "Lead",
  role: "lead",
  via: "token",
  tokenId: "00000000-0000-4000-8000-000000000000",
  tokenName: "hot statements",
  scope: "admin",
};

// A client as the server makes it, whose pool the hot statements go to (lib/db.ts, queryHot).
const db = createDb(requireDatabaseUrl());
afterAll(() => db.$disconnect());

async function preparedOnEveryConnection(pool: NonNullable<ReturnType<typeof poolOf>>) {
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  try {
    return await Promise.all(
      clients.map(async (client) =>
        (await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map(
          (row) => row.name,
        ),
      ),
    );
  } finally {
    for (const client of clients) client.release();
  }
}

describe("hot statements", () => {
  it("a gate verdict's statement is prepared on the connection that ran it", async () => {
    const caller = await registerAgentActor(db, "hot");
    const call = { tool: "read_file", args: { path: "README.md" } };
    // Each verdict is one statement; the first also reads what it assumes of the agent's row.
    for (let turn = 0; turn < 4; turn++) {
      expect(await recordToolCall(db, caller, call)).toEqual({ allowed: true });
    }
    const pool = poolOf(db);
    expect(pool).toBeDefined();
    const names = await preparedOnEveryConnection(pool as NonNullable<typeof pool>);
    expect(names.some((list) => list.includes("common-verdicts"))).toBe(true);
    expect(names.some((list) => list.includes("agent-verdict-facts"))).toBe(true);
    expect(await db.toolCall.count({ where: { agentId: caller.agentId, isAllowed: true } })).toBe(
      4,
    );
  });

  it("an agent's token is looked up by a prepared statement", async () => {
    const { token } = await registerAgent(db, {
      name: `hot-${randomBytes(4).toString("hex")}`,
      role: "tester",
    });
    const actor = await resolveActor(db, new Headers({ authorization: `Bearer ${token}` }));
    expect(actor).toMatchObject({ kind: "agent" });
    const pool = poolOf(db);
    expect(pool).toBeDefined();
    const names = await preparedOnEveryConnection(pool as NonNullable<typeof pool>);
    expect(names.some((list) => list.includes("agent-actor"))).toBe(true);
  });

  it("a client without our pool records each common verdict alone, through the client", async () => {
    const other = new PrismaClient({
      adapter: new PrismaPg({ connectionString: requireDatabaseUrl() }),
    });
    try {
      expect(poolOf(other)).toBeUndefined();
      const callers = [
        await registerAgentActor(other, "alone"),
        await registerAgentActor(other, "alone"),
      ];
      const call = { tool: "read_file", args: { path: "README.md" } };
      for (const caller of callers) await recordToolCall(other, caller, call);
      const verdicts = await Promise.all(
        callers.map((caller) => recordToolCall(other, caller, call)),
      );
      expect(verdicts).toEqual([{ allowed: true }, { allowed: true }]);
      const writers = await other.$queryRaw<{ writer: string }[]>`
        SELECT DISTINCT xmin::text AS writer FROM tool_calls
        WHERE agent_id = ANY(${callers.map((caller) => caller.agentId)}::uuid[])`;
      expect(writers).toHaveLength(4);
    } finally {
      await other.$disconnect();
    }
  });

  it("an inbox read is prepared, and reads what the client would", async () => {
    const agent = await registerAgentActor(db, "hot");
    const hub = new EventHub();
    const empty = await readInbox(db, hub, agent, { after: 0, wait: 0, limit: 10 }).read();
    expect(empty).toEqual({ messages: [], cursor: 0 });
    await sendMessage(db, LEAD, { to: agent.name, content: "hello" });
    const inbox = await readInbox(db, hub, agent, { after: 0, wait: 0, limit: 10 }).read();
    const stored = await db.message.findFirstOrThrow({ where: { recipient: agent.name } });
    expect(inbox).toEqual({
      messages: [
        {
          id: Number(stored.id),
          from: "lead",
          to: agent.name,
          type: stored.type,
          content: "hello",
          metadata: stored.metadata,
          incarnation: agent.incarnation,
          cancelledAt: null,
          createdAt: stored.createdAt.toISOString(),
        },
      ],
      cursor: Number(stored.id),
    });
    const pool = poolOf(db);
    const names = await preparedOnEveryConnection(pool as NonNullable<typeof pool>);
    expect(names.some((list) => list.includes("inbox-read"))).toBe(true);
  });

  it.each([
    ["common-verdicts", COMMON_VERDICTS_SQL],
    ["rule-allowed-verdicts", RULE_ALLOWED_VERDICTS_SQL],
  ])("%s finds a group's agents by key, not by reading every agent", async (_, sql) => {
    type PlanNode = { "Node Type": string; "Relation Name"?: string; Plans?: PlanNode[] };
    const scansOf = (node: PlanNode): string[] => [
      ...(node["Relation Name"] ? [`${node["Node Type"]} on ${node["Relation Name"]}`] : []),
      ...(node.Plans ?? []).flatMap(scansOf),
    ];
    const client = new pg.Client({ connectionString: requireDatabaseUrl() });
    await client.connect();
    try {
      // Rolled back: a table as large as a busy node's, and the statistics that say so.
      await client.query("BEGIN");
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO agents (name, role, token_hash)
         SELECT 'plan-' || n, 'bench', 'plan-hash-' || n || '-' || gen_random_uuid()
         FROM generate_series(1, 3000) n RETURNING id`,
      );
      await client.query("ANALYZE agents");
      const group = rows.slice(0, 4).map((row, position) => ({ position, agentId: row.id }));
      const explained = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${sql}`,
        [JSON.stringify(group)],
      );
      const scans = scansOf(explained.rows[0]?.["QUERY PLAN"][0].Plan as PlanNode);
      expect(scans.some((scan) => scan.endsWith(" on agents"))).toBe(true);
      expect(scans).not.toContain("Seq Scan on agents");
    } finally {
      await client.query("ROLLBACK");
      await client.end();
    }
  });
});

type ScratchDatabase = { client: pg.Client; close(): Promise<void> };

/** A new, migrated database of this file's own, and a client connected to it. */
async function openScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const adminUrl = inject("adminDatabaseUrl");
  const databaseUrl = await createScratchDatabase(adminUrl, prefix);
  await applyMigrations(databaseUrl, { isQuiet: true });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    client,
    async close() {
      await client.end();
      await dropScratchDatabase(adminUrl, databaseUrl);
    },
  };
}

/** An agent written straight into a scratch database, its token hash made from its name. */
async function insertAgent(
  client: pg.Client,
  name: string,
  { status, gate = "approved" }: { status: AgentStatus; gate?: GateState },
) {
  const { rows } = await client.query<{ id: string; name: string }>(
    `INSERT INTO agents (name, role, token_hash, status, gate)
     VALUES ($1, 'bench', $1 || '-hash', $2, $3)
     RETURNING id, name`,
    [name, status, gate],
  );
  const [agent] = rows;
  if (!agent) throw new Error(`no agent ${name}`);
  return agent;
}

/** One Lead's approval, as `decide_common_requests` takes it (lib/requests/common-decision.ts). */
function leadApproval(requestId: string, type: "plan_approval" | "tool_approval") {
  return {
    position: 0,
    requestId,
    type,
    status: "approved",
    approve: true,
    feedback: null,
    respondedBy: "lead",
    decidedBy: { kind: "human", userId: "lead" },
    at: new Date().toISOString(),
    responseType: `${type}_response`,
    gate: type === "tool_approval" ? null : "approved",
    waitingStatuses: LEAD_WAITING_STATUSES,
  };
}

// A server prepares each hot statement once per connection, and PostgreSQL keeps the plan it
// makes then: often while the tables are new. A plan that reads a group's rows by their keys stays
// right as the tables grow; one that read every agent's rows grew slower with the history.
describe("the rule-allowed verdicts' plan, made while the tables were new", () => {
  type PlanNode = {
    "Node Type": string;
    "Relation Name"?: string;
    "Actual Rows"?: number;
    "Actual Loops"?: number;
    "Rows Removed by Filter"?: number;
    "Shared Hit Blocks"?: number;
    Plans?: PlanNode[];
  };
  const readsOf = (node: PlanNode, table: string): PlanNode[] => [
    ...(node["Relation Name"] === table && node["Node Type"] !== "ModifyTable" ? [node] : []),
    ...(node.Plans ?? []).flatMap((child) => readsOf(child, table)),
  ];
  /** Rows and blocks a plan's reads of `table` went through, whatever they returned. */
  const costOfReads = (plan: PlanNode, table: string) =>
    readsOf(plan, table).reduce(
      (total, read) => ({
        rows:
          total.rows +
          (read["Actual Rows"] ?? 0) * (read["Actual Loops"] ?? 1) +
          (read["Rows Removed by Filter"] ?? 0),
        blocks: total.blocks + (read["Shared Hit Blocks"] ?? 0),
      }),
      { rows: 0, blocks: 0 },
    );

  let scratch: ScratchDatabase;
  let client: pg.Client;
  let group: { id: string; name: string }[];
  beforeAll(async () => {
    scratch = await openScratchDatabase("handshake_hot_plans");
    client = scratch.client;
    group = (
      await client.query<{ id: string; name: string }>(
        `INSERT INTO agents (name, role, token_hash, status, gate)
         SELECT 'grouped-' || n, 'bench', 'grouped-hash-' || n, 'working', 'approved'
         FROM generate_series(1, 4) n RETURNING id, name`,
      )
    ).rows;
  });
  afterAll(() => scratch.close());

  /**
   * Prepares `sql` while the tables hold only the group, runs it once with `before` (which writes
   * nothing) so the connection keeps a plan, lets `grow` fill the tables, then explains a run
   * with `after`, rolled back.
   */
  async function planAfterGrowth(options: {
    name: string;
    sql: string;
    before: unknown[];
    after: unknown[];
    grow: string;
  }): Promise<PlanNode> {
    const literals = (values: unknown[]) =>
      values
        .map((value) =>
          client.escapeLiteral(typeof value === "string" ? value : JSON.stringify(value)),
        )
        .join(", ");
    await client.query("SET plan_cache_mode = force_generic_plan");
    await client.query(`PREPARE ${options.name} AS ${options.sql}`);
    await client.query(`EXECUTE ${options.name}(${literals(options.before)})`);
    await client.query(options.grow);
    await client.query("BEGIN");
    try {
      const explained = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${options.name}(${literals(options.after)})`,
      );
      return explained.rows[0]?.["QUERY PLAN"][0].Plan as PlanNode;
    } finally {
      await client.query("ROLLBACK");
    }
  }

  it("a rule-allowed verdict reads only the approvals waiting to be used", async () => {
    const verdicts = (incarnation: number) =>
      group.map((agent, position) => {
        const requestId = `req_${String(position).padStart(32, "0")}`;
        return {
          position,
          agentId: agent.id,
          incarnation,
          name: agent.name,
          role: "bench",
          ownerTokenId: null,
          statuses: agentStatusSchema.options,
          gates: gateStateSchema.options,
          tool: "bash",
          args: { command: "git push origin main" },
          risk: { class: "risky", reasons: [] },
          subject: `agent:${agent.name}`,
          data: { agent: agent.name, tool: "bash", riskClass: "risky", requestId },
          requestId,
          payload: { tool: "bash", args: { command: "git push origin main" } },
          respondedBy: "rule",
          decidedBy: { kind: "rule", ruleId: "r" },
          decided: { requestId, type: "tool_approval", agent: agent.name, status: "approved" },
        };
      });
    const plan = await planAfterGrowth({
      name: "rule_allowed",
      sql: RULE_ALLOWED_VERDICTS_SQL,
      // Another incarnation: nothing is written.
      before: [verdicts(9)],
      after: [verdicts(1)],
      // A busy team's history of approvals, each used by its call, as a rule writes them.
      grow: `INSERT INTO requests (id, type, agent_id, sender, target, status, payload,
                                   responded_by, responded_at, decided_by, incarnation,
                                   expires_at, approval_used)
             SELECT 'req_' || md5(agent.id::text || n), 'tool_approval', agent.id, agent.name,
                    'lead', 'approved', '{}', 'rule', now(), '{"kind":"rule"}', 1, now(), true
             FROM agents agent, generate_series(1, 1500) n`,
    });
    expect(JSON.stringify(plan)).toContain('"Actual Rows":4');
    expect(costOfReads(plan, "requests")).toEqual({ rows: 0, blocks: expect.any(Number) });
    expect(costOfReads(plan, "requests").blocks).toBeLessThan(20);
  });
});

// A common decision's function keeps its plans on the connection that first ran it, as a
// prepared statement does: made on a new node, before the tables hold anything.
describe("a common decision's plan, made while the tables were new", () => {
  let scratch: ScratchDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    scratch = await openScratchDatabase("handshake_hot_decisions");
    client = scratch.client;
    await client.query("SET plan_cache_mode = force_generic_plan");
  });
  afterAll(() => scratch.close());

  it("a tool call's approval looks for the incarnation's other pending requests, not through its history", async () => {
    const agent = await insertAgent(client, "long-lived", { status: "waiting_approval" });
    /** Tool calls of the agent's incarnation asked under `ids`: pending, or approved and used. */
    const askFor = (ids: string[], status: "pending" | "approved") =>
      client.query(
        `INSERT INTO requests (id, type, agent_id, sender, target, status, payload, responded_by,
                               responded_at, decided_by, incarnation, work_version, expires_at,
                               approval_used)
         SELECT id, 'tool_approval', $2, $3, 'lead', $4::request_status,
                jsonb_build_object('tool', 'bash', 'callHash', md5(id)),
                CASE WHEN $4 = 'approved' THEN 'lead' END,
                CASE WHEN $4 = 'approved' THEN now() END,
                CASE WHEN $4 = 'approved' THEN '{"kind":"human","userId":"lead"}'::jsonb END,
                1, 0, now() + interval '1 hour', $4 = 'approved'
         FROM unnest($1::text[]) AS id`,
        [ids, agent.id, agent.name, status],
      );
    const requestId = `req_${"a".repeat(32)}`;
    await askFor([requestId], "pending");
    /** Approves the call, rolled back: what the decision read of `requests` by index. */
    const approve = async () => {
      await client.query("BEGIN");
      try {
        const { rows } = await client.query(
          "SELECT decision_position FROM decide_common_requests($1)",
          [JSON.stringify([leadApproval(requestId, "tool_approval")])],
        );
        const {
          rows: [read],
        } = await client.query<{ fetched: string }>(
          "SELECT idx_tup_fetch AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'requests'",
        );
        return { decided: rows.length, fetched: Number(read?.fetched) };
      } finally {
        await client.query("ROLLBACK");
      }
    };
    // Planned while the agent has one request, which it approves.
    expect((await approve()).decided).toBe(1);
    // The same incarnation's long history of approved and used calls.
    await askFor(
      Array.from({ length: 3000 }, (_, index) => `req_${String(index).padStart(32, "0")}`),
      "approved",
    );
    const approved = await approve();
    expect(approved.decided).toBe(1);
    expect(approved.fetched, "request rows fetched by index").toBeLessThan(20);
  });

  it("leaves to the full path a decision whose agent waits on a type the caller did not describe", async () => {
    // A node of an older build sends no waiting statuses: it must not guess the agent's status.
    const agent = await insertAgent(client, "undescribed", { status: "waiting_approval" });
    const ask = (id: string, type: string) =>
      client.query(
        `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation,
                               work_version, expires_at)
         VALUES ($1, $2, $3, $4, 'lead', jsonb_build_object('callHash', $1::text), 1, 0,
                 now() + interval '1 hour')`,
        [id, type, agent.id, agent.name],
      );
    const [toolCall, question] = [`req_${"c".repeat(32)}`, `req_${"d".repeat(32)}`];
    await ask(toolCall, "tool_approval");
    await ask(question, "question");
    const decide = async (waitingStatuses: Record<string, string>) => {
      await client.query("BEGIN");
      try {
        const decision = { ...leadApproval(toolCall, "tool_approval"), waitingStatuses };
        const { rows } = await client.query(
          "SELECT decision_position FROM decide_common_requests($1)",
          [JSON.stringify([decision])],
        );
        const {
          rows: [after],
        } = await client.query<{ status: string }>("SELECT status FROM agents WHERE id = $1", [
          agent.id,
        ]);
        return { decided: rows.length, agentStatus: after?.status };
      } finally {
        await client.query("ROLLBACK");
      }
    };
    expect(await decide({})).toEqual({ decided: 0, agentStatus: "waiting_approval" });
    expect(await decide(LEAD_WAITING_STATUSES)).toEqual({
      decided: 1,
      agentStatus: "waiting_answer",
    });
  });

  it("a common decision reads the live message before its own by index, not the agent's history", async () => {
    const agent = await insertAgent(client, "messaged", { status: "waiting_approval" });
    /** Asks for a tool call's approval and approves it, rolled back: the message before its own. */
    const approve = async () => {
      await client.query("BEGIN");
      try {
        const {
          rows: [asked],
        } = await client.query<{ id: string }>(
          `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation,
                                 work_version, expires_at)
           VALUES ('req_' || md5(random()::text), 'tool_approval', $1, $2, 'lead',
                   '{"callHash":"h"}', 1, 0, now() + interval '1 hour')
           RETURNING id`,
          [agent.id, agent.name],
        );
        // Counted since the backend last reported its statistics, which it does not do inside a
        // transaction: the difference is the decision's.
        const reads = async () => {
          const { rows } = await client.query<{ scans: string; fetched: string }>(
            `SELECT seq_scan AS scans, idx_tup_fetch AS fetched
             FROM pg_stat_xact_user_tables WHERE relname = 'messages'`,
          );
          return { scans: Number(rows[0]?.scans), fetched: Number(rows[0]?.fetched) };
        };
        const before = await reads();
        const { rows } = await client.query<{ previous_message_id: string | null }>(
          "SELECT previous_message_id FROM decide_common_requests($1)",
          [JSON.stringify([leadApproval(asked!.id, "tool_approval")])],
        );
        const after = await reads();
        return {
          previous: rows[0]?.previous_message_id,
          scans: after.scans - before.scans,
          fetched: after.fetched - before.fetched,
        };
      } finally {
        await client.query("ROLLBACK");
      }
    };
    // The function's statements are planned on this connection while the agent has no message,
    // and kept: an autovacuum's ANALYZE of the grown table would have them planned again.
    await client.query("ALTER TABLE messages SET (autovacuum_enabled = false)");
    expect((await approve()).previous).toBeNull();
    // A long-lived agent's thousands of messages, then a busy team's few each.
    await client.query(
      `INSERT INTO messages (sender, recipient, agent_id, incarnation, type, content)
       SELECT 'lead', $2, $1, 1, 'plan_approval_response', 'approved ' || n
       FROM generate_series(1, 3000) n`,
      [agent.id, agent.name],
    );
    const {
      rows: [newest],
    } = await client.query<{ id: string }>(
      "SELECT max(id) AS id FROM messages WHERE agent_id = $1",
      [agent.id],
    );
    await client.query(
      `WITH team AS (
         INSERT INTO agents (name, role, token_hash, status, gate)
         SELECT 'team-' || n, 'bench', 'team-hash-' || n, 'working', 'approved'
         FROM generate_series(1, 300) n RETURNING id, name
       )
       INSERT INTO messages (sender, recipient, agent_id, incarnation, type, content)
       SELECT 'lead', team.name, team.id, 1, 'plan_approval_response', 'approved ' || n
       FROM team, generate_series(1, 10) n`,
    );
    const asTheHistoryGrew = await approve();
    await client.query("ANALYZE messages");
    const analyzed = await approve();
    for (const read of [asTheHistoryGrew, analyzed]) {
      expect(read.previous).toBe(newest?.id);
      expect(read.scans, "sequential scans of messages").toBe(0);
      expect(read.fetched, "message rows fetched by index").toBeLessThan(10);
    }
  });
});

// PostgreSQL keeps a plan per statement of a function on each connection, and plans again at
// every call a statement whose plans made with the call's values look cheaper than the one it
// would keep.
describe("a common decision's statements, planned per connection", () => {
  let scratch: ScratchDatabase;
  let client: pg.Client;
  let plannings = 0;
  beforeAll(async () => {
    scratch = await openScratchDatabase("handshake_hot_planning");
    client = scratch.client;
    // Each planning reports its statistics to this client.
    await client.query("SET log_planner_stats = on");
    await client.query("SET client_min_messages = log");
    client.on("notice", (notice) => {
      if (notice.message === "PLANNER STATISTICS") plannings += 1;
    });
  });
  afterAll(() => scratch.close());

  it.each([
    ["a plan's", "plan_approval"],
    ["a tool call's", "tool_approval"],
  ] as const)("%s approval is not planned again at each decision", async (_, type) => {
    const agent = await insertAgent(client, `decided-${type.replace("_", "-")}`, {
      status: "waiting_approval",
      gate: "pending",
    });
    /** Asks for an approval and approves it; how many plannings the approval took. */
    const approve = async (turn: number) => {
      const {
        rows: [asked],
      } = await client.query<{ id: string }>(
        `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation,
                               work_version, expires_at)
         SELECT 'req_' || md5($1 || $2), $1, id, name, 'lead',
                jsonb_build_object('callHash', md5($1 || $2)), incarnation, work_version,
                now() + interval '1 hour'
         FROM agents WHERE id = $3
         RETURNING id`,
        [type, turn, agent.id],
      );
      if (!asked) throw new Error("no request");
      plannings = 0;
      // Prepared, as the server sends it (lib/db.ts, queryHot).
      const { rows } = await client.query({
        name: "common-decisions",
        text: "SELECT decision_position FROM decide_common_requests($1)",
        values: [JSON.stringify([leadApproval(asked.id, type)])],
      });
      expect(rows).toHaveLength(1);
      return plannings;
    };
    // PostgreSQL plans a statement with each call's values five times before it keeps a plan.
    for (let turn = 0; turn < 6; turn++) await approve(turn);
    const later = [await approve(6), await approve(7), await approve(8)];
    expect(later, "plannings per approval, once the plans are kept").toEqual([0, 0, 0]);
  });
});

// Each statement that writes a table prepares its checks, its triggers' WHEN clauses and its
// indexes' predicates again, and fires the events' notifying trigger once (decision 088).
describe("a group of common decisions, written by one statement", () => {
  let scratch: ScratchDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    scratch = await openScratchDatabase("handshake_hot_group");
    client = scratch.client;
  });
  afterAll(() => scratch.close());

  /** A plan asked by a new agent of each name. */
  async function askFor(names: string[]) {
    const ids: string[] = [];
    for (const name of names) {
      const agent = await insertAgent(client, name, {
        status: "waiting_approval",
        gate: "pending",
      });
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation,
                               work_version, expires_at)
         VALUES ('req_' || md5($1), 'plan_approval', $2, $1, 'lead', '{}', 1, 0,
                 now() + interval '1 hour')
         RETURNING id`,
        [name, agent.id],
      );
      ids.push(rows[0]!.id);
    }
    return ids;
  }

  /** Decides the group in one call, rolled back: what it decided, and how, in order. */
  async function decide(group: ReturnType<typeof leadApproval>[]) {
    await client.query("BEGIN");
    try {
      await client.query("SET LOCAL track_functions = 'pl'");
      // Counted since the backend last reported its statistics, which it does not do inside a
      // transaction: the difference is this call's.
      const triggerCalls = async () => {
        const { rows } = await client.query<{ calls: string }>(
          `SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_xact_user_functions
           WHERE funcname = 'events_notify_inserted'`,
        );
        return Number(rows[0]?.calls);
      };
      const callsBefore = await triggerCalls();
      const { rows } = await client.query<{ decision_position: number }>(
        "SELECT decision_position FROM decide_common_requests($1)",
        [JSON.stringify(group.map((decision, position) => ({ ...decision, position })))],
      );
      const callsAfter = await triggerCalls();
      const { rows: updates } = await client.query<{ update: string }>(
        `SELECT (data ->> 'agent') || ' ' || (data ->> 'status') AS update FROM events
         WHERE kind = 'agent.updated' ORDER BY id`,
      );
      return {
        decided: rows.map((row) => row.decision_position),
        triggerCalls: callsAfter - callsBefore,
        agentUpdates: updates.map((row) => row.update),
      };
    } finally {
      await client.query("ROLLBACK");
    }
  }

  it("notifies a group's events in one call of the trigger, not one per decision", async () => {
    const group = await askFor(["grouped-a", "grouped-b", "grouped-c"]);
    expect(await decide(group.map((id) => leadApproval(id, "plan_approval")))).toEqual({
      decided: [0, 1, 2],
      triggerCalls: 1,
      agentUpdates: ["grouped-a working", "grouped-b working", "grouped-c working"],
    });
  });

  it("decides a second decision of one agent in a second pass, which sees the first's writes", async () => {
    const [planOfA, planOfB] = await askFor(["twice-a", "once-b"]);
    const {
      rows: [toolCallOfA],
    } = await client.query<{ id: string }>(
      `INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation,
                             work_version, expires_at)
       SELECT 'req_' || md5('tool'), 'tool_approval', id, name, 'lead', '{"callHash":"h"}', 1, 0,
              now() + interval '1 hour'
       FROM agents WHERE name = 'twice-a'
       RETURNING id`,
    );
    const group = [
      leadApproval(toolCallOfA!.id, "tool_approval"),
      leadApproval(planOfA!, "plan_approval"),
      leadApproval(planOfB!, "plan_approval"),
    ];
    expect(await decide(group)).toEqual({
      // The first pass decides A's tool call, while A's plan still waits, and B's plan.
      decided: [0, 2, 1],
      triggerCalls: 2,
      agentUpdates: ["twice-a waiting_approval", "once-b working", "twice-a working"],
    });
  });
});
