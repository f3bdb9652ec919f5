import { randomBytes } from "node:crypto";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { findEditedApprovalFor } from "../../lib/tool-calls/edited-approval";
import { approvalsOfCall } from "../../lib/tool-calls/mutations";

// The gate's lookups of a call's approvals, as Prisma sends them, for an agent with a long
// history: each must go through its index (migration 021), not read the agent's every request.
const HISTORY = 3_000;
const databaseUrl = requireDatabaseUrl();
const db = getDb();
let agent: Awaited<ReturnType<typeof db.agent.create>>;

type Captured = { sql: string; params: unknown[] };

/** Runs `lookup` through a Prisma client that logs its queries, and returns the one on requests. */
async function captureSql(lookup: (logged: PrismaClient) => Promise<unknown>): Promise<Captured> {
  const logged = new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, max: 1 }),
    log: [{ emit: "event", level: "query" }],
  });
  const captured: Captured[] = [];
  logged.$on("query", (event) =>
    captured.push({ sql: event.query, params: JSON.parse(event.params) as unknown[] }),
  );
  try {
    await lookup(logged);
  } finally {
    await logged.$disconnect();
  }
  const onRequests = captured.filter((entry) => /\bFROM "public"\."requests"/.test(entry.sql));
  expect(onRequests).toHaveLength(1);
  return onRequests[0] as Captured;
}

/** The plan PostgreSQL runs the captured statement with, as the driver sends it (with values). */
async function planOf({ sql, params }: Captured): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) ${sql}`,
      params,
    );
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  agent = await db.agent.create({
    data: {
      name: `history-${randomBytes(3).toString("hex")}`,
      role: "tester",
      tokenHash: randomBytes(32).toString("hex"),
      workVersion: 0,
    },
  });
  // Approvals of other calls, used, as a long-lived agent collects them; some with the Lead's edits.
  await db.$executeRaw`
    INSERT INTO requests (id, type, agent_id, sender, target, status, payload, response,
                          responded_by, responded_at, decided_by, incarnation, work_version,
                          expires_at, approval_used)
    SELECT 'req_' || md5(${agent.id} || g::text), 'tool_approval', ${agent.id}::uuid,
           ${agent.name}, 'lead', 'approved',
           jsonb_build_object('tool', 'bash', 'callHash', md5(g::text)),
           CASE WHEN g % 10 = 0
             THEN jsonb_build_object('approvedCallHash', md5('edit' || g::text)) END,
           'lead', now(), '{"kind":"human","userId":"u","sessionId":"s"}', 1, 0, now(), true
    FROM generate_series(1, ${HISTORY}::int) g`;
  await db.$executeRaw`ANALYZE requests`;
});

afterAll(() => db.$disconnect());

describe("a call's approvals, for an agent with a long history", () => {
  it("every approval of this exact call: through requests_tool_approvals_by_call_idx", async () => {
    const plan = await planOf(
      await captureSql((logged) => approvalsOfCall(logged, agent, "no-such-call")),
    );
    expect(plan).toContain("requests_tool_approvals_by_call_idx");
    expect(plan).not.toMatch(/Rows Removed by Filter: \d{3,}/);
  });

  it("a Lead's edit approved into this call: through requests_tool_approvals_by_edit_idx", async () => {
    const plan = await planOf(
      await captureSql((logged) => findEditedApprovalFor(logged, agent, "no-such-call")),
    );
    expect(plan).toContain("requests_tool_approvals_by_edit_idx");
    expect(plan).not.toMatch(/Rows Removed by Filter: \d{3,}/);
  });
});
