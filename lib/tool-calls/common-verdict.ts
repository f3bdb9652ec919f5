import type { AgentActor } from "../auth/actor";
import { queryHot, type Db } from "../db";
import type { Agent } from "../generated/prisma/client";
import {
  isRefusedAnywhere,
  prepareAgentCall,
  ruleApprovalOf,
  ruleSubjectOf,
  type RuleTrace,
} from "../rules/evaluate";
import { newRequestId } from "../requests/request-id";
import { loadLiveRules } from "../rules/rule-cache";
import { agentStatusSchema, gateStateSchema, isAgentActive } from "../shared/agents/schema";
import { decideGate } from "../shared/protocol/gate";
import { refuseWhileStopping } from "../shared/protocol/stop-gate";
import type { ToolRisk } from "../shared/protocol/tool-risk";
import { judgeByRules } from "../shared/rules/verdict";
import type { ToolCallInput, ToolVerdict } from "./schema";

/**
 * The common verdicts in one statement each (decision 028 and its amendment): a worker's call that
 * the plan gate allows and no enforced rule decides (a read, or anything under an open gate), and a
 * call an enforced allow rule lets through instead of a card; neither has a card to find or raise.
 * The full path (lib/tool-calls/mutations.ts) is a transaction of five round trips or more.
 *
 * What that verdict depends on in the agent's row (incarnation, status, gate, and the name, role
 * and `connect` token a rule's scope is matched with) is guessed from the agent's last full
 * verdict and then required by the statement itself, under the row lock: if the row no longer
 * matches, nothing is written and the caller takes the full path, which judges the row as it is.
 * A wrong guess therefore costs a round trip, never a verdict.
 */
type AgentFacts = Pick<Agent, "name" | "role" | "ownerTokenId" | "incarnation">;

const MAX_REMEMBERED_AGENTS = 10_000;
// server.ts (run by tsx) and Next's bundled code load modules separately; one map per process.
const holder = globalThis as typeof globalThis & {
  handshakeVerdictFacts?: Map<string, AgentFacts>;
};
function rememberedFacts(): Map<string, AgentFacts> {
  holder.handshakeVerdictFacts ??= new Map();
  return holder.handshakeVerdictFacts;
}

/** Called by the full path with the row it locked; only a worker (not a connected session) qualifies. */
export function rememberVerdictFacts(agent: Agent): void {
  const facts = rememberedFacts();
  if (agent.connectorKey !== null) {
    facts.delete(agent.id);
    return;
  }
  if (facts.size >= MAX_REMEMBERED_AGENTS && !facts.has(agent.id)) facts.clear();
  const { name, role, ownerTokenId, incarnation } = agent;
  facts.set(agent.id, { name, role, ownerTokenId, incarnation });
}

// Locks the row only if it still is what the verdict assumed.
const LOCKED_AGENT_CTE = `
  WITH agent AS (
    SELECT id, gate, work_version, task_id FROM agents
    WHERE id = $1::uuid
      AND incarnation = $2
      AND name = $3
      AND role = $4
      AND owner_token_id IS NOT DISTINCT FROM $5::uuid
      AND connector_key IS NULL
      AND status::text = ANY($6::text[])
      AND gate::text = ANY($7::text[])
    FOR UPDATE
  )`;

// Records the attempt and its event; the event's data is the full path's, with the gate taken from
// the locked row.
const COMMON_VERDICT_SQL = `${LOCKED_AGENT_CTE}, call AS (
    INSERT INTO tool_calls (agent_id, incarnation, tool, args, gate, is_allowed, risk)
    SELECT id, $2, $8, $9::jsonb, gate, true, $10::jsonb FROM agent
    RETURNING gate
  )
  INSERT INTO events (kind, subject, data)
  SELECT 'tool.allowed', $11, $12::jsonb || jsonb_build_object('gate', gate::text) FROM call
  RETURNING id`;

// A call an allow rule lets through: the rule's approval (lib/rules/evaluate.ts, approveByRule),
// fenced to the work the locked row has and written used, then the attempt that uses it, then
// their two events in the full path's order. An approval in that work that no call has used yet
// (the Lead's: a rule's is written used) may be this call's, which the full path spends before the
// rule's: then nothing is written here. One the Lead gives while this statement waits for the row
// lock is not seen; the call was asked for before that decision.
const RULE_ALLOWED_VERDICT_SQL = `${LOCKED_AGENT_CTE}, approval AS (
    INSERT INTO requests (id, type, agent_id, sender, target, status, payload, responded_by,
                          responded_at, decided_by, incarnation, work_version, task_id, expires_at,
                          approval_used)
    SELECT $13, 'tool_approval', id, $3, 'lead', 'approved', $14::jsonb, $15, $16::timestamptz,
           $17::jsonb, $2, work_version, task_id, $16::timestamptz, true
    FROM agent
    WHERE NOT EXISTS (
      SELECT 1 FROM requests unused
      WHERE unused.agent_id = agent.id
        AND unused.type = 'tool_approval'
        AND unused.status = 'approved'
        AND NOT unused.approval_used
        AND unused.incarnation = $2
        AND unused.work_version = agent.work_version
        AND unused.task_id IS NOT DISTINCT FROM agent.task_id
    )
    RETURNING id
  ), call AS (
    INSERT INTO tool_calls (agent_id, incarnation, tool, args, gate, is_allowed, risk, request_id)
    SELECT agent.id, $2, $8, $9::jsonb, agent.gate, true, $10::jsonb, approval.id
    FROM agent, approval
    RETURNING gate
  )
  INSERT INTO events (kind, subject, data)
  SELECT kind, subject, data FROM (
    SELECT 1 AS position, 'request.decided' AS kind, 'request:' || $13 AS subject,
           $18::jsonb AS data
    FROM approval
    UNION ALL
    SELECT 2, 'tool.allowed', $11, $12::jsonb || jsonb_build_object('gate', gate::text) FROM call
  ) event
  ORDER BY position
  RETURNING id`;

const ACTIVE_STATUSES = (tool: string) =>
  agentStatusSchema.options.filter(
    (status) => isAgentActive(status) && refuseWhileStopping(status === "stopping", tool) === null,
  );

/** Every agent status and plan-gate value under which the plan gate allows this call. */
function allowingStates(tool: string, risk: ToolRisk) {
  const gates = gateStateSchema.options.filter((gate) => decideGate(gate, tool, risk).allowed);
  return { gates, statuses: ACTIVE_STATUSES(tool) };
}

/** Every status and gate under which the plan gate would raise a card for this call. */
function cardStates(tool: string, risk: ToolRisk) {
  const gates = gateStateSchema.options.filter((gate) => {
    const verdict = decideGate(gate, tool, risk);
    return !verdict.allowed && "needsApproval" in verdict;
  });
  return { gates, statuses: ACTIVE_STATUSES(tool) };
}

/**
 * Records and answers the common verdict in one statement, or returns null (nothing written) when
 * the call is not the common case or the agent's row does not match what the verdict assumed.
 */
export async function tryRecordCommonVerdict(
  db: Db,
  actor: AgentActor,
  input: ToolCallInput,
  risk: ToolRisk,
): Promise<ToolVerdict | null> {
  // A directory or a file change belongs to connected sessions and file guards: the full path.
  if (input.cwd !== undefined || input.file !== undefined) return null;
  const facts = rememberedFacts().get(actor.agentId);
  if (!facts || facts.incarnation !== actor.incarnation) return null;

  const now = new Date();
  const rules = await loadLiveRules(db, now);
  const worker = { ...facts, connector: null, connectorKey: null };
  const judged =
    rules.length > 0
      ? judgeByRules(
          rules,
          prepareAgentCall(worker, input.tool, input.args, undefined),
          ruleSubjectOf(worker),
          now,
        )
      : null;
  const shadowTrace: RuleTrace = judged?.shadow
    ? { shadowRuleId: judged.shadow.id, shadowEffect: judged.shadow.effect }
    : {};
  const rule = judged?.rule ?? null;
  // An enforced deny or ask, and an allow of a call it may not let through: the full path.
  if (rule !== null && (rule.effect !== "allow" || isRefusedAnywhere(worker, input, risk))) {
    return null;
  }
  const { gates, statuses } =
    rule === null ? allowingStates(input.tool, risk) : cardStates(input.tool, risk);
  if (gates.length === 0 || statuses.length === 0) return null;

  const toolCallRisk = {
    class: risk.class,
    ...(risk.code ? { code: risk.code } : {}),
    reasons: risk.reasons,
  };
  const callValues = (trace: RuleTrace & { requestId?: string }) => [
    actor.agentId,
    facts.incarnation,
    facts.name,
    facts.role,
    facts.ownerTokenId,
    statuses,
    gates,
    input.tool,
    JSON.stringify(input.args),
    JSON.stringify(toolCallRisk),
    `agent:${facts.name}`,
    JSON.stringify({ agent: facts.name, tool: input.tool, riskClass: risk.class, ...trace }),
  ];
  if (rule === null) {
    const recorded = await queryHot(
      db,
      "common-verdict",
      COMMON_VERDICT_SQL,
      callValues(shadowTrace),
    );
    return recorded.length === 1 ? { allowed: true } : null;
  }

  const requestId = newRequestId();
  const { payload, decidedBy, respondedBy } = ruleApprovalOf(input, risk, rule);
  const decided = {
    requestId,
    type: "tool_approval",
    agent: facts.name,
    status: "approved",
    respondedBy,
    decidedBy,
  };
  const recorded = await queryHot(db, "rule-allowed-verdict", RULE_ALLOWED_VERDICT_SQL, [
    ...callValues({ requestId, ...shadowTrace, ruleId: rule.id }),
    requestId,
    JSON.stringify(payload),
    respondedBy,
    now,
    JSON.stringify(decidedBy),
    JSON.stringify(decided),
  ]);
  return recorded.length === 2 ? { allowed: true, requestId, ruleId: rule.id } : null;
}
