import { hasSqlState, queryHot } from "../db";
import type { GateState } from "../shared/agents/schema";
import type { PrismaClient, Request } from "../generated/prisma/client";
import { expectDecisionMessage } from "../messages/decision-messages";
import { getEventHub } from "../realtime/event-hub";
import type { ProtocolTypeDefinition } from "../protocol/definition";
import { planApproval } from "../protocol/plan-approval";
import { toolApproval } from "../protocol/tool-approval";
import { refuseRaisedToTwoLeads } from "./approvals";
import { decidedByOf, responderLabel } from "./decided-by";
import { LATE_DECISION_SQLSTATE } from "./deadline";
import type { Responder } from "./mutations";
import type { RespondInput } from "./schema";
import { toRequestView, type RequestView } from "./views";

/**
 * The common decision in one statement (decision 031): one Lead approving or rejecting, as asked,
 * a pending plan or tool call that needs one approval. The full path (`decideRequest` in
 * ./mutations.ts) is a transaction of six round trips; this is one call of `decide_common_request`
 * (migration 018), which reads the request, locks the agent, checks every fence under that lock,
 * compare-and-sets the status and writes the agent, the answer and the events as the full path
 * would. Anything it does not recognise writes nothing and returns no row: the caller then takes
 * the full path, which decides the unusual case or produces the right refusal.
 */

/** What each covered type does to the agent, restated from its definition's onApproved/onRejected. */
type CommonEffect = {
  definition: ProtocolTypeDefinition;
  /** The gate after the decision; null leaves it alone. */
  gateAfter: (approve: boolean) => GateState | null;
  /** The agent waits on the Lead while another request of its incarnation does (parallel calls). */
  isWaitingWhileOthersPend: boolean;
};

const COMMON_EFFECTS: readonly CommonEffect[] = [
  {
    definition: planApproval,
    gateAfter: (approve) => (approve ? "approved" : "rejected"),
    isWaitingWhileOthersPend: false,
  },
  { definition: toolApproval, gateAfter: () => null, isWaitingWhileOthersPend: true },
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

// The message the decision sends is its agent's newest: its id and time, and the live message
// before it, are what a long-poll woken here needs to answer with it unread (migration 024,
// decisions 040 and 052).
const COMMON_DECISION_SQL = `
  WITH decided AS (
    SELECT * FROM decide_common_request($1, $2, $3::request_status, $4::boolean, $5, $6, $7::jsonb,
      $8::timestamptz, $9, $10::gate_state, $11::boolean)
  )
  SELECT ${Object.entries(REQUEST_COLUMNS)
    .map(([field, column]) => `decided.${column} AS "${field}"`)
    .join(", ")},
    message.message_id AS "messageId", message.message_at AS "messageAt",
    message.previous_message_id AS "previousMessageId"
  FROM decided
  LEFT JOIN LATERAL decision_message(decided.agent_id, decided.incarnation) message ON true`;

type DecidedRow = Request & {
  // `pg` reads a bigint as its text.
  messageId: string | null;
  messageAt: string | null;
  previousMessageId: string | null;
};

/**
 * Decides the request in one statement and returns it, or returns null (nothing written) when the
 * decision is not the common case or the rows are not what the common case needs. Never inside a
 * transaction: the statement has committed when it answers, and the decision's waits are woken
 * then.
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
  const values = [
    requestId,
    definition.type,
    definition.decisionOutcome(approve),
    approve,
    feedback,
    responderLabel(responder),
    JSON.stringify(decidedByOf(responder)),
    new Date().toISOString(),
    definition.responseType,
    effect.gateAfter(approve),
    effect.isWaitingWhileOthersPend,
  ];
  const statement = queryHot<DecidedRow>(db, "common-decision", COMMON_DECISION_SQL, values).then(
    ([decided]) => decided,
  );
  expectDecisionMessage(
    requestId,
    statement.then(
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
  let decided: DecidedRow | undefined;
  try {
    decided = await statement;
  } catch (error) {
    // A deadline moved into the past while the statement waited for the lock: nothing was
    // written, and the full path expires the request (REQUEST_EXPIRED).
    if (hasSqlState(error, LATE_DECISION_SQLSTATE)) return null;
    throw refuseRaisedToTwoLeads(error);
  }
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
 * later (decision 052). The events are those `decide_common_request` wrote, less their ids; an
 * inbox answers with the message kept by `expectDecisionMessage`, a request wait reads.
 */
function wakeWaitsForDecision(decided: DecidedRow, responseType: string): void {
  if (decided.messageId === null || decided.messageAt === null) return;
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
