import type { AgentActor } from "../auth/actor";
import { hasSqlState, isUniqueViolation, queryHot, type Db } from "../db";
import type { Prisma, Request } from "../generated/prisma/client";
import { describeTimeoutPolicy, type ProtocolTypeDefinition } from "../protocol/definition";
import { agentStatusSchema, isAgentActive } from "../shared/agents/schema";
import type { CreatedRequest } from "./mutations";
import { expectNewRequestRow } from "./new-rows";
import { newRequestId } from "./request-id";
import { toRequestView, type RequestView } from "./views";

/**
 * The common submission in one statement (decision 030): a worker's plan to the Lead, superseding
 * its pending plan if it has one. The full path (createRequestInTransaction) is eight statements
 * inside BEGIN and COMMIT; this is one, writing the same rows and the same events in the same order.
 *
 * The statement reads the requests it depends on (the pending plan, an idempotency key's earlier
 * request, rejected plans) from its snapshot, and locks the agent row only if that row is still the
 * version the snapshot saw. The writers that change those reads hold the agent's lock and update
 * its row (a plan's creation and decision, an incarnation's end), so one that committed while this
 * statement waited for the lock changed the row: nothing is written and the full path runs. What
 * changes them without touching the row (a request of another type under the same idempotency key)
 * trips a unique index, which rolls the statement back whole. A repeat of a rejected plan (asked
 * again, which compares plans normalised in TypeScript) and a used idempotency key take the full
 * path too.
 */
const COMMON_SUBMISSION_SQL = `
  WITH agent AS (
    SELECT id, name, incarnation, work_version, task_id FROM agents
    WHERE id = $1::uuid
      AND incarnation = $2
      AND name = $3
      AND status::text = ANY($4::text[])
      AND xmin = (SELECT xmin FROM agents WHERE id = $1::uuid)
      AND NOT EXISTS (
        SELECT 1 FROM requests
        WHERE agent_id = $1::uuid AND type = 'plan_approval' AND status = 'rejected'
      )
      AND NOT EXISTS (
        SELECT 1 FROM requests
        WHERE agent_id = $1::uuid AND incarnation = $2 AND idempotency_key = $5
      )
    FOR UPDATE
  ), superseded AS (
    UPDATE requests
    SET status = 'superseded', feedback = 'superseded by a newer request',
        responded_by = 'system', responded_at = $6::timestamptz
    FROM agent
    WHERE requests.agent_id = agent.id AND requests.type = 'plan_approval'
      AND requests.status = 'pending'
    RETURNING requests.id, requests.type
  ), request AS (
    -- After the supersession, which frees the one pending slot per agent and type.
    INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation, work_version,
                          task_id, idempotency_key, required_approvals, expires_at)
    SELECT $7::text, 'plan_approval', id, name, 'lead', $8::jsonb, incarnation, work_version, task_id,
           $5, 1, $9::timestamptz
    FROM agent WHERE (SELECT count(*) FROM superseded) >= 0
    RETURNING *
  ), updated AS (
    UPDATE agents
    SET status = 'waiting_approval', gate = 'pending', updated_at = $6::timestamptz
    FROM request
    WHERE agents.id = request.agent_id
    RETURNING agents.name, agents.incarnation, agents.status, agents.gate, agents.work_version,
              agents.task_id, agents.tool_host
  ), message AS (
    INSERT INTO messages (sender, recipient, type, content, metadata)
    SELECT sender, 'lead', 'plan_approval', $10,
           jsonb_build_object('requestId', id, 'incarnation', incarnation)
    FROM request
    RETURNING id, sender
  ), appended AS (
    INSERT INTO events (kind, subject, data)
    SELECT kind, subject, data FROM (
      SELECT 1 AS position, 'request.superseded' AS kind, 'request:' || id AS subject,
             jsonb_build_object('requestId', id, 'agent', $3::text, 'type', type) AS data
      FROM superseded
      UNION ALL
      SELECT 2, 'agent.updated', 'agent:' || name,
             jsonb_build_object('agent', name, 'incarnation', incarnation, 'status', status,
                                'gate', gate, 'workVersion', work_version, 'taskId', task_id,
                                'toolHost', tool_host)
      FROM updated
      UNION ALL
      SELECT 3, 'message.sent', 'inbox:lead',
             jsonb_build_object('messageId', id, 'from', sender, 'to', 'lead',
                                'type', 'plan_approval', 'requestId', $7::text)
      FROM message
      UNION ALL
      SELECT 4, 'request.created', 'request:' || $7::text, $11::jsonb FROM request
    ) event
    ORDER BY position
  )
  SELECT * FROM request`;

type RequestRow = {
  id: string;
  type: string;
  agent_id: string;
  sender: string;
  target: string;
  status: Request["status"];
  payload: Prisma.JsonValue;
  feedback: string | null;
  responded_by: string | null;
  responded_at: Date | null;
  decided_by: Prisma.JsonValue;
  response: Prisma.JsonValue;
  asked_again_after: Prisma.JsonValue;
  incarnation: number;
  work_version: number | null;
  task_id: string | null;
  idempotency_key: string | null;
  created_at: Date;
  expires_at: Date;
  required_approvals: number;
  approval_used: boolean;
};

function toRequest(row: RequestRow): Request {
  return {
    id: row.id,
    type: row.type,
    agentId: row.agent_id,
    sender: row.sender,
    target: row.target,
    status: row.status,
    payload: row.payload,
    feedback: row.feedback,
    respondedBy: row.responded_by,
    respondedAt: row.responded_at,
    decidedBy: row.decided_by,
    response: row.response,
    askedAgainAfter: row.asked_again_after,
    incarnation: row.incarnation,
    workVersion: row.work_version,
    taskId: row.task_id,
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    requiredApprovals: row.required_approvals,
    approvalUsed: row.approval_used,
  };
}

/** An agent that agreed to stop asks for no new work: the full path refuses it. */
const SUBMITTING_STATUSES = agentStatusSchema.options.filter(
  (status) => isAgentActive(status) && status !== "stopping",
);

/**
 * Records a worker's plan in one statement, or returns null (nothing written) when the submission
 * is not the common case or the agent's row is not what the statement requires.
 */
export async function trySubmitCommonPlan(
  db: Db,
  actor: AgentActor,
  definition: ProtocolTypeDefinition,
  payload: Prisma.InputJsonObject,
  input: { idempotencyKey?: string | undefined; timeoutSeconds?: number | undefined },
): Promise<CreatedRequest | null> {
  if (definition.type !== "plan_approval") return null;
  const id = newRequestId();
  const now = new Date();
  const timeoutSeconds = input.timeoutSeconds ?? definition.defaultTimeoutSeconds("agent_to_lead");
  const expiresAt = new Date(now.getTime() + timeoutSeconds * 1000);
  const created = {
    requestId: id,
    type: definition.type,
    agent: actor.name,
    sender: actor.name,
    target: "lead",
    expiresAt: expiresAt.toISOString(),
    timeoutPolicy: describeTimeoutPolicy(
      definition.timeout("agent_to_lead", payload as Record<string, unknown>).policy,
    ),
  };
  const values = [
    actor.agentId,
    actor.incarnation,
    actor.name,
    SUBMITTING_STATUSES,
    input.idempotencyKey ?? null,
    now,
    id,
    JSON.stringify(payload),
    expiresAt,
    definition.summarize(payload as Record<string, unknown>),
    JSON.stringify(created),
  ];
  const written = queryHot<RequestRow>(db, "common-submission", COMMON_SUBMISSION_SQL, values).then(
    ([row]) => (row ? toRequestView(toRequest(row)) : undefined),
  );
  expectNewRequestRow(
    id,
    written.catch(() => undefined),
  );
  let request: RequestView | undefined;
  try {
    request = await written;
  } catch (error) {
    // A request committed under the same idempotency key, or a pending plan, while the statement
    // ran: it rolled back whole, and the full path judges the rows as they now are.
    if (isUniqueViolation(error) || hasSqlState(error, "23505")) return null;
    throw error;
  }
  if (!request) return null;
  return { request, isCreated: true };
}
