import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  captureRequestsSql,
  explain,
  type CapturedQuery,
  type ExplainResult,
} from "../../bench/history";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import { findEditedApprovalFor } from "../../lib/tool-calls/edited-approval";
import { approvalsOfCall } from "../../lib/tool-calls/mutations";

// The gate's lookups of a call's approvals, as Prisma sends them, for an agent with a long
// history: each must go through its index (migration 021), not read the agent's every request.
const HISTORY = 3_000;
const databaseUrl = requireDatabaseUrl();
const db = getDb();
let agent: Awaited<ReturnType<typeof db.agent.create>>;

/** The plan of the one statement on requests that `lookup` sends, as Prisma sends it. */
async function planOf(lookup: (db: PrismaClient) => Promise<unknown>): Promise<ExplainResult> {
  const captured = await captureRequestsSql(databaseUrl, lookup);
  expect(captured).toHaveLength(1);
  return explain(databaseUrl, captured[0] as CapturedQuery);
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
    const { plan, indexes } = await planOf((logged) =>
      approvalsOfCall(logged, agent, "no-such-call"),
    );
    expect(indexes).toEqual(["requests_tool_approvals_by_call_idx"]);
    expect(plan).not.toMatch(/Rows Removed by Filter: \d{3,}/);
  });

  it("a Lead's edit approved into this call: through requests_tool_approvals_by_edit_idx", async () => {
    const { plan, indexes } = await planOf((logged) =>
      findEditedApprovalFor(logged, agent, "no-such-call"),
    );
    expect(indexes).toEqual(["requests_tool_approvals_by_edit_idx"]);
    expect(plan).not.toMatch(/Rows Removed by Filter: \d{3,}/);
  });
});
