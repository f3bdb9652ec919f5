import { isDataException, isTransactionRollback, queryHot, type Db } from "../db";
import { GroupCommitPerPool } from "../group-commit";
import type { AgentStatus, GateState } from "../shared/agents/schema";
import type { PrismaClient, Request } from "../generated/prisma/client";
import { expectDecisionMessage } from "../messages/decision-messages";
import { getEventHub } from "../realtime/event-hub";
import type { ProtocolTypeDefinition } from "../protocol/definition";
import { planApproval } from "../protocol/plan-approval";
import { LEAD_WAITING_STATUSES } from "../protocol/registry";
import { toolApproval } from "../protocol/tool-approval";
import { decidedByOf, responderLabel } from "./decided-by";
import type { Responder } from "./mutations";
import type { RespondInput } from "./schema";
import { toRequestView, type RequestView } from "./views";
import { databaseNow } from "../database-clock";

/**
 * The common decisions, committed in groups (decisions 031 and 054): one Lead approving or
 * rejecting, as asked, a pending plan or tool call that needs one approval. The full path
 * (`decideRequest` in ./mutations.ts) is a transaction of six round trips; this is one call of
 * `decide_common_requests` (migration 025; 029, 032 and 033 replaced it) for the decisions that
 * arrive while the pool's group commits. It locks the group's agents, then their requests, and then
 * in one statement (decision 088; one more for each further decision of one agent) checks every
 * fence under those locks, decides the requests and writes the agents, the answers and the events
 * as the full path would. A decision it does not recognise, or whose agent or request another
 * transaction holds, writes nothing: the caller then takes the full path, which decides the
 * unusual case or produces the right refusal.
 */

/** What each covered type does to the agent, restated from its definition's onApproved/onRejected. */
type CommonEffect = {
  definition: ProtocolTypeDefinition;
  /** The gate after the decision; null leaves it alone. */
  gateAfter: (approve: boolean) => GateState | null;
};

const COMMON_EFFECTS: readonly CommonEffect[] = [
  {
    definition: planApproval,
    gateAfter: (approve) => (approve ? "approved" : "rejected"),
  },
  { definition: toolApproval, gateAfter: () => null },
];

// Every column, aliased to the client's field names, so the row is what `findUnique` returns.
const REQUEST_COLUMNS = {
  id: "id",
  type: "type",
  agentId: "agent_id",
  sender: "sender",
  target: "target",
  status: "status",
  payload: "payload",
  feedback: "feedback",
  respondedBy: "responded_by",
  respondedAt: "responded_at",
  decidedBy: "decided_by",
  response: "response",
  askedAgainAfter: "asked_again_after",
  incarnation: "incarnation",
  workVersion: "work_version",
  taskId: "task_id",
  idempotencyKey: "idempotency_key",
  createdAt: "created_at",
  expiresAt: "expires_at",
  requiredApprovals: "required_approvals",
  approvalUsed: "approval_used",
} as const satisfies Record<keyof Request, string>;

// Each decision's message is its agent's newest: its id and time, and the live message before
// it, are what a long-poll woken here needs to answer with it unread (decisions 040 and 052; the
// function reads them since migration 033).
const COMMON_DECISIONS_SQL = `
  SELECT decision_position AS "position",
    ${Object.entries(REQUEST_COLUMNS)
      .map(([field, column]) => `(decided).${column} AS "${field}"`)
      .join(", ")},
    message_id AS "messageId", message_at AS "messageAt",
    previous_message_id AS "previousMessageId"
  FROM decide_common_requests($1::jsonb)`;

/** What `decide_common_requests` reads of one decision. */
type DecisionRow = {
  requestId: string;
  type: string;
  status: string;
  approve: boolean;
  feedback: string | null;
  respondedBy: string;
  decidedBy: unknown;
  at: string;
  responseType: string;
  gate: GateState | null;
  /** What the agent waits in while another of its requests waits on the Lead, by type. */
  waitingStatuses: Readonly<Record<string, AgentStatus>>;
};

type DecidedRow = Request & {
  position: number;
  // `pg` reads a bigint as its text.
  messageId: string;
  messageAt: string;
  /** Null when the decision's answer is the first live message of the agent's incarnation. */
  previousMessageId: string | null;
};

/** A decision writes six rows, a plan eight: the same group size (decision 054). */
const MAX_DECISIONS_PER_COMMIT = 16;

/** The rows the decisions wrote, by position; undefined for one that takes the full path. */
async function commitDecisions(
  db: Db,
  decisions: DecisionRow[],
): Promise<(DecidedRow | undefined)[]> {
  let decided: DecidedRow[];
  try {
    decided = await queryHot<DecidedRow>(db, "common-decisions", COMMON_DECISIONS_SQL, [
      JSON.stringify(decisions.map((decision, position) => ({ ...decision, position }))),
    ]);
  } catch (error) {
    // A value one decision carried that PostgreSQL refused, or a deadlock it broke by rolling the
    // group back (a group never waits on a row, but its inserts and updates wait on a table lock,
    // as a migration takes): the statement rolled back whole, and the full path judges each
    // decision alone. One decision cannot fail the others of its group.
    if (isDataException(error) || isTransactionRollback(error)) {
      return decisions.map(() => undefined);
    }
    throw error;
  }
  const byPosition = new Map(decided.map((row) => [row.position, row]));
  return decisions.map((_, position) => byPosition.get(position));
}

const decisions = new GroupCommitPerPool(commitDecisions, MAX_DECISIONS_PER_COMMIT);

/**
 * Decides the request, committed in a group, and returns it, or returns null (nothing written)
 * when the decision is not the common case or the rows are not what the common case needs. Never
 * inside a transaction: the statement has committed when it answers, and the decision's waits
 * are woken then.
 */
export async function tryDecideCommonRequest(
  db: PrismaClient,
  responder: Responder,
  requestId: string,
  input: RespondInput,
): Promise<RequestView | null> {
  if (responder.kind !== "human" || responder.role !== "lead") return null;
  const { type: responseType, approve, feedback: rawFeedback, ...fields } = input;
  // Edits need the type's own checks (prepareResponse): the full path.
  if (Object.keys(fields).length > 0) return null;
  const effect = COMMON_EFFECTS.find(({ definition }) => definition.responseType === responseType);
  const feedback = rawFeedback?.trim() || null;
  // A rejection without a reason is refused by the full path.
  if (!effect || (!approve && !feedback)) return null;

  const { definition } = effect;
  const written = decisions.add(db, {
    requestId,
    type: definition.type,
    status: definition.decisionOutcome(approve),
    approve,
    feedback,
    respondedBy: responderLabel(responder),
    decidedBy: decidedByOf(responder),
    at: databaseNow().toISOString(),
    responseType: definition.responseType,
    gate: effect.gateAfter(approve),
    waitingStatuses: LEAD_WAITING_STATUSES,
  });
  expectDecisionMessage(
    requestId,
    written.then(
      (decided) =>
        decided && {
          from: decided.target,
          to: decided.sender,
          agentId: decided.agentId,
          incarnation: decided.incarnation,
          type: definition.responseType,
          content: feedback ?? "",
          metadata: { requestId, approve, status: decided.status },
          cancelledAt: null,
          previousId: decided.previousMessageId === null ? null : Number(decided.previousMessageId),
        },
      () => undefined,
    ),
  );
  const decided = await written;
  if (!decided) return null;
  try {
    wakeWaitsForDecision(decided, definition.responseType);
  } catch (error) {
    // The decision has committed: whatever a woken wait does, the Lead is told it was made, and
    // the bridge wakes the waits this left asleep.
    console.error("[requests] waking a decision's waits failed", error);
  }
  return toRequestView(decided);
}

/**
 * Wakes the long-polls on this node that wait for this decision, its agent's inbox and the
 * request's own waits, as soon as it has committed: the bridge would publish its events a NOTIFY
 * later (decision 052). The events are those `decide_common_requests` wrote, less their ids; an
 * inbox answers with the message kept by `expectDecisionMessage`, a request wait reads.
 */
function wakeWaitsForDecision(decided: DecidedRow, responseType: string): void {
  const hub = getEventHub();
  hub.wakeWaitsFor({
    kind: "message.sent",
    subject: `inbox:${decided.sender}`,
    at: decided.messageAt,
    data: {
      messageId: Number(decided.messageId),
      from: decided.target,
      to: decided.sender,
      type: responseType,
      requestId: decided.id,
    },
  });
  hub.wakeWaitsFor({
    kind: "request.decided",
    subject: `request:${decided.id}`,
    at: decided.messageAt,
    data: {
      requestId: decided.id,
      type: decided.type,
      agent: decided.sender,
      status: decided.status,
      respondedBy: decided.respondedBy,
      decidedBy: decided.decidedBy,
    },
  });
}
