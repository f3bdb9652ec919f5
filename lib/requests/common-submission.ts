import type { AgentActor } from "../auth/actor";
import { hasSqlState, isDataException, isUniqueViolation, queryHot, type Db } from "../db";
import { GroupCommitPerPool } from "../group-commit";
import type { Prisma, Request } from "../generated/prisma/client";
import { describeTimeoutPolicy, type ProtocolTypeDefinition } from "../protocol/definition";
import { agentStatusSchema, isAgentActive } from "../shared/agents/schema";
import type { CreatedRequest } from "./mutations";
import { expectNewRequestRow } from "./new-rows";
import { newRequestId } from "./request-id";
import { toRequestView } from "./views";
import { databaseNowMs } from "../database-clock";

/**
 * The common submission in one statement (decision 030): a worker's plan to the Lead, superseding
 * its pending plan if it has one. The full path (createRequestInTransaction) is eight statements
 * inside BEGIN and COMMIT; this is one, writing the same rows and the same events in the same order.
 * It takes a group of plans, each for its own agent (decision 053): the plans that arrive while the
 * pool's group commits go together in the next, their rows and events in the order they arrived.
 *
 * The statement reads what each plan depends on (the pending plan, an idempotency key's earlier
 * request, rejected plans) from its snapshot, and writes a plan only if its agent's row, once
 * locked, is still the version the snapshot saw. The writers that change those reads hold the
 * agent's lock and update its row (a plan's creation and decision, an incarnation's end), so one
 * that committed after the snapshot changed the row, and one that still holds it makes the
 * statement skip the row: that plan is not written and takes the full path, which waits for the
 * lock. What changes those reads without touching the row (a request of another type under the
 * same idempotency key) trips a unique index, which rolls the statement back whole: every plan of
 * the group takes the full path. A repeat of a rejected plan (asked again, which compares plans
 * normalised in TypeScript), a used idempotency key and a second plan of one agent in the group
 * take the full path too.
 */
const COMMON_SUBMISSIONS_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS row(
      position int, "agentId" uuid, incarnation int, name text, "idempotencyKey" text, id text,
      payload jsonb, "expiresAt" timestamptz, summary text, created jsonb)
  ), seen AS (
    -- Each agent's row as the statement's snapshot reads it, before any lock.
    SELECT id, xmin FROM agents WHERE id = ANY (ARRAY(SELECT "agentId" FROM input))
  ), locked AS (
    -- An array, not IN (subquery), so each agent is looked up by its key (decision 042). Not a key
    -- update, so a request or tool call inserted for the agent (a key share) is not waited for.
    SELECT id, name, incarnation, status, work_version, task_id, xmin FROM agents
    WHERE id = ANY (ARRAY(SELECT "agentId" FROM input))
    ORDER BY id
    FOR NO KEY UPDATE SKIP LOCKED
  ), agent AS MATERIALIZED (
    SELECT DISTINCT ON (input."agentId") input.*, locked.work_version, locked.task_id
    FROM input
    JOIN locked ON locked.id = input."agentId"
    JOIN seen ON seen.id = locked.id AND seen.xmin = locked.xmin
    WHERE locked.incarnation = input.incarnation
      AND locked.name = input.name
      AND locked.status::text = ANY($2::text[])
      AND NOT EXISTS (
        SELECT 1 FROM requests
        WHERE agent_id = locked.id AND type = 'plan_approval' AND status = 'rejected'
      )
      AND NOT EXISTS (
        SELECT 1 FROM requests
        WHERE agent_id = locked.id AND incarnation = input.incarnation
          AND idempotency_key = input."idempotencyKey"
      )
    ORDER BY input."agentId", input.position
  ), superseded AS (
    UPDATE requests
    SET status = 'superseded', feedback = 'superseded by a newer request',
        responded_by = 'system', responded_at = now()
    FROM agent
    WHERE requests.agent_id = agent."agentId" AND requests.type = 'plan_approval'
      AND requests.status = 'pending'
    RETURNING requests.id, requests.type, agent.position, agent.name
  ), request AS (
    -- After the supersessions, which free the one pending slot per agent and type.
    INSERT INTO requests (id, type, agent_id, sender, target, payload, incarnation, work_version,
                          task_id, idempotency_key, required_approvals, expires_at)
    SELECT id, 'plan_approval', "agentId", name, 'lead', payload, incarnation, work_version,
           task_id, "idempotencyKey", 1, "expiresAt"
    FROM agent WHERE (SELECT count(*) FROM superseded) >= 0
    ORDER BY position
    RETURNING *
  ), updated AS (
    UPDATE agents
    SET status = 'waiting_approval', gate = 'pending', updated_at = now()
    FROM request
    WHERE agents.id = request.agent_id
    RETURNING agents.id, agents.name, agents.incarnation, agents.status, agents.gate,
              agents.work_version, agents.task_id, agents.tool_host
  ), message AS (
    INSERT INTO messages (sender, recipient, type, content, metadata)
    SELECT agent.name, 'lead', 'plan_approval', agent.summary,
           jsonb_build_object('requestId', agent.id, 'incarnation', agent.incarnation)
    FROM agent JOIN request ON request.id = agent.id
    ORDER BY agent.position
    RETURNING id, sender, metadata ->> 'requestId' AS request_id
  ), appended AS (
    INSERT INTO events (kind, subject, data)
    SELECT kind, subject, data FROM (
      SELECT position, 1 AS step, 'request.superseded' AS kind, 'request:' || id AS subject,
             jsonb_build_object('requestId', id, 'agent', name, 'type', type) AS data
      FROM superseded
      UNION ALL
      SELECT agent.position, 2, 'agent.updated', 'agent:' || updated.name,
             jsonb_build_object('agent', updated.name, 'incarnation', updated.incarnation,
                                'status', updated.status, 'gate', updated.gate,
                                'workVersion', updated.work_version, 'taskId', updated.task_id,
                                'toolHost', updated.tool_host)
      FROM updated JOIN agent ON agent."agentId" = updated.id
      UNION ALL
      SELECT agent.position, 3, 'message.sent', 'inbox:lead',
             jsonb_build_object('messageId', message.id, 'from', message.sender, 'to', 'lead',
                                'type', 'plan_approval', 'requestId', agent.id)
      FROM message JOIN agent ON agent.id = message.request_id
      UNION ALL
      SELECT agent.position, 4, 'request.created', 'request:' || agent.id, agent.created
      FROM request JOIN agent ON agent.id = request.id
    ) event
    ORDER BY position, step
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

/** One plan as the grouped statement takes it: what it assumes, and what it writes. */
type SubmissionRow = {
  agentId: string;
  incarnation: number;
  name: string;
  idempotencyKey: string | null;
  id: string;
  payload: Prisma.InputJsonObject;
  expiresAt: Date;
  /** The Lead's message. */
  summary: string;
  /** The `request.created` event's data. */
  created: Record<string, unknown>;
};

/** A plan writes eight rows where a verdict writes two: its group is smaller (decision 053). */
const MAX_SUBMISSIONS_PER_COMMIT = 16;

/** The rows the plans wrote, by position; undefined for a plan that takes the full path. */
async function commitSubmissions(
  db: Db,
  rows: SubmissionRow[],
): Promise<(RequestRow | undefined)[]> {
  let written: RequestRow[];
  try {
    written = await queryHot<RequestRow>(db, "common-submissions", COMMON_SUBMISSIONS_SQL, [
      JSON.stringify(rows.map((row, position) => ({ ...row, position }))),
      SUBMITTING_STATUSES,
    ]);
  } catch (error) {
    // A request committed under one plan's idempotency key, or a pending plan, while the statement
    // ran; or a value one plan carried that PostgreSQL refused. The statement rolled back whole,
    // and the full path judges each plan alone: one plan cannot fail the others of its group.
    if (isUniqueViolation(error) || hasSqlState(error, "23505") || isDataException(error)) {
      return rows.map(() => undefined);
    }
    throw error;
  }
  const byId = new Map(written.map((row) => [row.id, row]));
  return rows.map((row) => byId.get(row.id));
}

const submissions = new GroupCommitPerPool(commitSubmissions, MAX_SUBMISSIONS_PER_COMMIT);

/**
 * Records a worker's plan, committed in a group, or returns null (nothing written) when the
 * submission is not the common case or the agent's row is not what the statement requires.
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
  const timeoutSeconds = input.timeoutSeconds ?? definition.defaultTimeoutSeconds("agent_to_lead");
  const expiresAt = new Date(databaseNowMs() + timeoutSeconds * 1000);
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
  const written = submissions
    .add(db, {
      agentId: actor.agentId,
      incarnation: actor.incarnation,
      name: actor.name,
      idempotencyKey: input.idempotencyKey ?? null,
      id,
      payload,
      expiresAt,
      summary: definition.summarize(payload as Record<string, unknown>),
      created,
    })
    .then((row) => (row ? toRequestView(toRequest(row)) : undefined));
  expectNewRequestRow(
    id,
    written.catch(() => undefined),
  );
  const request = await written;
  return request ? { request, isCreated: true } : null;
}
