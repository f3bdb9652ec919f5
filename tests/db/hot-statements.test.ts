import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { HumanActor } from "../../lib/auth/actor";
import { createDb, poolOf } from "../../lib/db";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { requireDatabaseUrl } from "../../lib/env";
import { sendMessage } from "../../lib/messages/mutations";
import { readInbox } from "../../lib/messages/data";
import { EventHub } from "../../lib/realtime/event-hub";
import {
  COMMON_VERDICTS_SQL,
  RULE_ALLOWED_VERDICTS_SQL,
} from "../../lib/tool-calls/common-verdict";
import { recordToolCall } from "../../lib/tool-calls/mutations";
import { registerAgentActor } from "../support/agent-actor";

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
    // The first verdict takes the full path and remembers the row; the next ones are one statement.
    await recordToolCall(db, caller, call);
    for (let turn = 0; turn < 3; turn++) {
      expect(await recordToolCall(db, caller, call)).toEqual({ allowed: true });
    }
    const pool = poolOf(db);
    expect(pool).toBeDefined();
    const names = await preparedOnEveryConnection(pool as NonNullable<typeof pool>);
    expect(names.some((list) => list.includes("common-verdicts"))).toBe(true);
    expect(await db.toolCall.count({ where: { agentId: caller.agentId, isAllowed: true } })).toBe(
      4,
    );
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
    const empty = await readInbox(db, hub, agent, { after: 0, wait: 0, limit: 10 });
    expect(empty).toEqual({ messages: [], cursor: 0 });
    await sendMessage(db, LEAD, { to: agent.name, content: "hello" });
    const inbox = await readInbox(db, hub, agent, { after: 0, wait: 0, limit: 10 });
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
