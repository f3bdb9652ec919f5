import type { AgentActor } from "../auth/actor";
import { poolOf, type Db } from "../db";
import type { Agent } from "../generated/prisma/client";
import { prepareAgentCall, ruleSubjectOf, type RuleTrace } from "../rules/evaluate";
import { loadLiveRules } from "../rules/rule-cache";
import { agentStatusSchema, gateStateSchema, isAgentActive } from "../shared/agents/schema";
import { decideGate } from "../shared/protocol/gate";
import { refuseWhileStopping } from "../shared/protocol/stop-gate";
import type { ToolRisk } from "../shared/protocol/tool-risk";
import { judgeByRules } from "../shared/rules/verdict";
import type { ToolCallInput, ToolVerdict } from "./schema";

/**
 * The common verdict in one statement (decision 028): a worker's call that the plan gate allows and
 * no enforced rule decides (a read, or anything under an open gate), with no card to find or raise.
 * The full path (lib/tool-calls/mutations.ts) is a transaction of five round trips; this is one.
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

// Locks the row only if it still is what the verdict assumed, then records the attempt and its
// event; the event's data is the full path's, with the gate taken from the locked row.
const COMMON_VERDICT_SQL = `
  WITH agent AS (
    SELECT id, gate FROM agents
    WHERE id = $1::uuid
      AND incarnation = $2
      AND name = $3
      AND role = $4
      AND owner_token_id IS NOT DISTINCT FROM $5::uuid
      AND connector_key IS NULL
      AND status::text = ANY($6::text[])
      AND gate::text = ANY($7::text[])
    FOR UPDATE
  ), call AS (
    INSERT INTO tool_calls (agent_id, incarnation, tool, args, gate, is_allowed, risk)
    SELECT id, $2, $8, $9::jsonb, gate, true, $10::jsonb FROM agent
    RETURNING gate
  )
  INSERT INTO events (kind, subject, data)
  SELECT 'tool.allowed', $11, $12::jsonb || jsonb_build_object('gate', gate::text) FROM call
  RETURNING id`;

/** Every agent status and plan-gate value under which the plan gate allows this call. */
function allowingStates(tool: string, risk: ToolRisk) {
  const gates = gateStateSchema.options.filter((gate) => decideGate(gate, tool, risk).allowed);
  const statuses = agentStatusSchema.options.filter(
    (status) => isAgentActive(status) && refuseWhileStopping(status === "stopping", tool) === null,
  );
  return { gates, statuses };
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
  const { gates, statuses } = allowingStates(input.tool, risk);
  if (gates.length === 0 || statuses.length === 0) return null;

  const now = new Date();
  const rules = await loadLiveRules(db, now);
  let trace: RuleTrace = {};
  if (rules.length > 0) {
    const worker = { ...facts, connector: null, connectorKey: null };
    const judged = judgeByRules(
      rules,
      prepareAgentCall(worker, input.tool, input.args, undefined),
      ruleSubjectOf(worker),
      now,
    );
    // An enforced rule may deny, ask or write its own approval: the full path decides those.
    if (judged.rule !== null) return null;
    if (judged.shadow) {
      trace = { shadowRuleId: judged.shadow.id, shadowEffect: judged.shadow.effect };
    }
  }

  const toolCallRisk = {
    class: risk.class,
    ...(risk.code ? { code: risk.code } : {}),
    reasons: risk.reasons,
  };
  const eventData = { agent: facts.name, tool: input.tool, riskClass: risk.class, ...trace };
  const values = [
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
    JSON.stringify(eventData),
  ];
  const pool = poolOf(db);
  const recorded = pool
    ? (await pool.query(COMMON_VERDICT_SQL, values)).rows
    : await db.$queryRawUnsafe<unknown[]>(COMMON_VERDICT_SQL, ...values);
  return recorded.length === 1 ? { allowed: true } : null;
}
