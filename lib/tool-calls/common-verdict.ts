import type { AgentActor } from "../auth/actor";
import { queryHot, type Db } from "../db";
import { GroupCommitPerPool } from "../group-commit";
import type { Agent } from "../generated/prisma/client";
import {
  isBeyondAllowRules,
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
import { databaseNow } from "../database-clock";
import { toRecordedRisk } from "../protocol/stored-risk";

/**
 * The common verdicts in one statement each (decision 028 and its amendment): a worker's call that
 * the plan gate allows and no enforced rule decides (a read, or anything under an open gate), and a
 * call an enforced allow rule lets through instead of a card; neither has a card to find or raise.
 * The full path (lib/tool-calls/mutations.ts) is a transaction of five round trips or more. Both
 * are committed in groups (decision 042): the calls that arrive while one statement commits go
 * together in the next.
 *
 * What that verdict depends on in the agent's row (incarnation, status, gate, and the name, role
 * and `connect` token a rule's scope is matched with) is guessed from the agent's last full
 * verdict, or else from one read of its row (its first call on this node, or a respawn), and then
 * required by the statement itself, under the row lock: if the row no longer matches, nothing is
 * written and the caller takes the full path, which judges the row as it is. A wrong guess
 * therefore costs a round trip, never a verdict.
 */
type AgentFacts = Pick<Agent, "name" | "role" | "ownerTokenId" | "incarnation">;

/** An agent whose calls are a connected session's, which only the full path judges. */
const CONNECTED = "connected";
type RememberedAgent = AgentFacts | typeof CONNECTED;

const MAX_REMEMBERED_AGENTS = 10_000;
// server.ts (run by tsx) and Next's bundled code load modules separately; one map per process.
const holder = globalThis as typeof globalThis & {
  handshakeVerdictFacts?: Map<string, RememberedAgent>;
};
function rememberedAgents(): Map<string, RememberedAgent> {
  holder.handshakeVerdictFacts ??= new Map();
  return holder.handshakeVerdictFacts;
}

function remember(agentId: string, remembered: RememberedAgent): void {
  const agents = rememberedAgents();
  if (agents.size >= MAX_REMEMBERED_AGENTS && !agents.has(agentId)) agents.clear();
  agents.set(agentId, remembered);
}

/** Called by the full path with the row it locked. */
export function rememberVerdictFacts(agent: Agent): void {
  const { name, role, ownerTokenId, incarnation } = agent;
  remember(
    agent.id,
    agent.connectorKey !== null ? CONNECTED : { name, role, ownerTokenId, incarnation },
  );
}

const AGENT_FACTS_SQL = `
  SELECT name, role, owner_token_id, incarnation, connector_key IS NOT NULL AS is_connected
  FROM agents WHERE id = $1`;

type AgentFactsRow = {
  name: string;
  role: string;
  owner_token_id: string | null;
  incarnation: number;
  is_connected: boolean;
};

/**
 * The facts to guess the caller's row by; undefined sends the call to the full path. An agent
 * this node has not judged yet (since it started, or since it last forgot them all, full), or
 * only in an earlier incarnation, is read once, unlocked: a team starting together, or coming
 * back to a node that just started, sent every agent's first call down the full path's
 * transaction, and the node fell seconds behind a thousand agents calling once a second (the
 * bench's team phase).
 */
async function factsOf(db: Db, actor: AgentActor): Promise<AgentFacts | undefined> {
  const remembered = rememberedAgents().get(actor.agentId);
  if (remembered === CONNECTED) return undefined;
  if (remembered?.incarnation === actor.incarnation) return remembered;
  // An incarnation that has ended: the full path refuses it without this read.
  if (remembered !== undefined && remembered.incarnation > actor.incarnation) return undefined;
  const [row] = await queryHot<AgentFactsRow>(db, "agent-verdict-facts", AGENT_FACTS_SQL, [
    actor.agentId,
  ]);
  if (!row) return undefined;
  if (row.is_connected) {
    remember(actor.agentId, CONNECTED);
    return undefined;
  }
  const facts = {
    name: row.name,
    role: row.role,
    ownerTokenId: row.owner_token_id,
    incarnation: row.incarnation,
  };
  remember(actor.agentId, facts);
  return facts.incarnation === actor.incarnation ? facts : undefined;
}

/** One call as a grouped statement takes it: what its verdict assumes, and what it writes. */
type VerdictRow = {
  agentId: string;
  incarnation: number;
  name: string;
  role: string;
  ownerTokenId: string | null;
  statuses: string[];
  gates: string[];
  tool: string;
  args: Record<string, unknown>;
  risk: Record<string, unknown>;
  subject: string;
  /** The `tool.allowed` event's data, but for the gate, which comes from the locked row. */
  data: Record<string, unknown>;
};

/** A call an allow rule lets through also writes the rule's approval and its event. */
type RuleAllowedRow = VerdictRow & {
  requestId: string;
  payload: Record<string, unknown>;
  respondedBy: string;
  decidedBy: Record<string, unknown>;
  /** The `request.decided` event's data. */
  decided: Record<string, unknown>;
};

/**
 * A statement over a group of calls (decision 042), answering the positions it recorded. Each
 * agent's row is locked in id order and must still be what the verdict assumed; a row another
 * transaction holds is skipped, not waited for, so one agent's lock cannot hold up the others'
 * verdicts: that call takes the full path, which waits.
 */
function verdictsSql(options: { approvalColumns: string; approvalFence: string; writes: string }) {
  return `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS row(
      position int, "agentId" uuid, incarnation int, name text, role text, "ownerTokenId" uuid,
      statuses text[], gates text[], tool text, args jsonb, risk jsonb, subject text, data jsonb
      ${options.approvalColumns})
  ), locked AS (
    SELECT id, incarnation, name, role, owner_token_id, connector_key, status, gate, work_version,
           task_id
    FROM agents
    -- An array, not IN (subquery): the planner, guessing a hundred input rows, would hash-join
    -- the whole agents table instead of looking each agent up by its key.
    WHERE id = ANY (ARRAY(SELECT "agentId" FROM input))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
  ), allowed AS MATERIALIZED (
    SELECT input.*, locked.gate, locked.work_version, locked.task_id
    FROM input JOIN locked ON locked.id = input."agentId"
    WHERE locked.incarnation = input.incarnation
      AND locked.name = input.name
      AND locked.role = input.role
      AND locked.owner_token_id IS NOT DISTINCT FROM input."ownerTokenId"
      AND locked.connector_key IS NULL
      AND locked.status::text = ANY(input.statuses)
      AND locked.gate::text = ANY(input.gates)
      ${options.approvalFence}
  ), ${options.writes}
  SELECT position FROM allowed`;
}

// Records each call and its event; the event's data is the full path's.
export const COMMON_VERDICTS_SQL = verdictsSql({
  approvalColumns: "",
  approvalFence: "",
  writes: `call AS (
    INSERT INTO tool_calls (agent_id, incarnation, tool, args, gate, is_allowed, risk)
    SELECT "agentId", incarnation, tool, args, gate, true, risk FROM allowed ORDER BY position
  ), event AS (
    INSERT INTO events (kind, subject, data)
    SELECT 'tool.allowed', subject, data || jsonb_build_object('gate', gate::text)
    FROM allowed ORDER BY position
  )`,
});

// A call an allow rule lets through: the rule's approval (lib/rules/evaluate.ts, approveByRule),
// fenced to the work the locked row has and written used, then the attempt that uses it, then
// their two events in the full path's order. An approval in that work that no call has used yet
// (the Lead's: a rule's is written used) may be this call's, which the full path spends before the
// rule's: then nothing is written here. One the Lead gives while this statement runs is not seen;
// the call was asked for before that decision. The approval is decided when its group commits, not
// when its call was judged: a call that waited for the group before it is not decided before the
// row that records it was created.
export const RULE_ALLOWED_VERDICTS_SQL = verdictsSql({
  approvalColumns: `, "requestId" text, payload jsonb, "respondedBy" text, "decidedBy" jsonb,
      decided jsonb`,
  // The input's agent, not the locked row's (the same id): looked up by a key from one side of
  // the join, the approval is read through migration 020's partial index by agent. Keyed by the
  // locked row, the statement's plan, made once per connection while the table was new, read every
  // request of the incarnation on every call, all agents' (issue 18: a rule-allowed verdict cost
  // PostgreSQL 0.85 ms and grew with the history).
  approvalFence: `AND NOT EXISTS (
        SELECT 1 FROM requests unused
        WHERE unused.agent_id = input."agentId"
          AND unused.type = 'tool_approval'
          AND unused.status = 'approved'
          AND NOT unused.approval_used
          AND unused.incarnation = input.incarnation
          AND unused.work_version = locked.work_version
          AND unused.task_id IS NOT DISTINCT FROM locked.task_id
      )`,
  writes: `approval AS (
    INSERT INTO requests (id, type, agent_id, sender, target, status, payload, responded_by,
                          responded_at, decided_by, incarnation, work_version, task_id, expires_at,
                          approval_used)
    SELECT "requestId", 'tool_approval', "agentId", name, 'lead', 'approved', payload,
           "respondedBy", now(), "decidedBy", incarnation, work_version, task_id, now(), true
    FROM allowed ORDER BY position
  ), call AS (
    INSERT INTO tool_calls (agent_id, incarnation, tool, args, gate, is_allowed, risk, request_id)
    SELECT "agentId", incarnation, tool, args, gate, true, risk, "requestId"
    FROM allowed ORDER BY position
  ), event AS (
    INSERT INTO events (kind, subject, data)
    SELECT kind, subject, data FROM (
      SELECT position, 1 AS step, 'request.decided' AS kind, 'request:' || "requestId" AS subject,
             decided AS data
      FROM allowed
      UNION ALL
      SELECT position, 2, 'tool.allowed', subject, data || jsonb_build_object('gate', gate::text)
      FROM allowed
    ) event
    ORDER BY position, step
  )`,
});

const MAX_VERDICTS_PER_COMMIT = 64;

/** One of the grouped statements, with its groups (decision 042). */
class GroupedVerdicts {
  private readonly groups: GroupCommitPerPool<VerdictRow, boolean>;

  constructor(
    private readonly name: string,
    private readonly sql: string,
  ) {
    this.groups = new GroupCommitPerPool(
      (db, rows) => this.commit(db, rows),
      MAX_VERDICTS_PER_COMMIT,
    );
  }

  /** Whether the call was recorded, committed with the calls that came while it waited. */
  record(db: Db, row: VerdictRow): Promise<boolean> {
    return this.groups.add(db, row);
  }

  /** Commits the rows in one statement; for each, whether it was recorded. */
  private async commit(db: Db, rows: VerdictRow[]): Promise<boolean[]> {
    const recorded = await queryHot<{ position: number }>(db, this.name, this.sql, [
      JSON.stringify(rows.map((row, position) => ({ ...row, position }))),
    ]);
    const positions = new Set(recorded.map((row) => row.position));
    return rows.map((_, position) => positions.has(position));
  }
}

const COMMON_VERDICTS = new GroupedVerdicts("common-verdicts", COMMON_VERDICTS_SQL);
const RULE_ALLOWED_VERDICTS = new GroupedVerdicts(
  "rule-allowed-verdicts",
  RULE_ALLOWED_VERDICTS_SQL,
);

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
  const facts = await factsOf(db, actor);
  if (!facts) return null;

  const now = databaseNow();
  const rules = await loadLiveRules(db, now);
  const worker = { ...facts, connector: null, connectorKey: null };
  const judged =
    rules.length > 0
      ? judgeByRules(
          rules,
          prepareAgentCall(worker, input.tool, input.args, undefined, risk),
          ruleSubjectOf(worker),
          now,
        )
      : null;
  const shadowTrace: RuleTrace = judged?.shadow
    ? { shadowRuleId: judged.shadow.id, shadowEffect: judged.shadow.effect }
    : {};
  const rule = judged?.rule ?? null;
  // An enforced deny or ask, and an allow of a call it may not let through: the full path.
  if (rule !== null && (rule.effect !== "allow" || isBeyondAllowRules(worker, input, risk))) {
    return null;
  }
  const { gates, statuses } =
    rule === null ? allowingStates(input.tool, risk) : cardStates(input.tool, risk);
  if (gates.length === 0 || statuses.length === 0) return null;

  const toolCallRisk = toRecordedRisk(risk);
  const verdictRow = (trace: RuleTrace & { requestId?: string }): VerdictRow => ({
    agentId: actor.agentId,
    incarnation: facts.incarnation,
    name: facts.name,
    role: facts.role,
    ownerTokenId: facts.ownerTokenId,
    statuses,
    gates,
    tool: input.tool,
    args: input.args,
    risk: toolCallRisk,
    subject: `agent:${facts.name}`,
    data: { agent: facts.name, tool: input.tool, riskClass: risk.class, ...trace },
  });
  if (rule === null) {
    const isRecorded = await COMMON_VERDICTS.record(db, verdictRow(shadowTrace));
    return isRecorded ? { allowed: true } : null;
  }

  const requestId = newRequestId();
  const { payload, decidedBy, respondedBy } = ruleApprovalOf(input, risk, rule);
  const approved: RuleAllowedRow = {
    ...verdictRow({ requestId, ...shadowTrace, ruleId: rule.id }),
    requestId,
    payload,
    respondedBy,
    decidedBy,
    decided: {
      requestId,
      type: "tool_approval",
      agent: facts.name,
      status: "approved",
      respondedBy,
      decidedBy,
    },
  };
  const isRecorded = await RULE_ALLOWED_VERDICTS.record(db, approved);
  return isRecorded ? { allowed: true, requestId, ruleId: rule.id } : null;
}
