import type { Request, RequestApproval, User } from "../generated/prisma/client";
import { describeTimeoutPolicy, type Direction } from "../protocol/definition";
import { findProtocolType } from "../protocol/registry";
import {
  askedAgainAfterSchema,
  decidedBySchema,
  type AskedAgainAfter,
  type DecidedBy,
  type RequestApprovalView,
} from "../shared/api/request";

export type RequestView = {
  id: string;
  type: string;
  status: string;
  sender: string;
  target: string;
  /** The agent the request concerns (the sender, or the target of a Lead's request). */
  agent: string;
  payload: Record<string, unknown>;
  feedback: string | null;
  respondedBy: string | null;
  /** Who decided, structured; null while pending, when superseded or cancelled, and for requests decided before it was recorded. */
  decidedBy: DecidedBy | null;
  respondedAt: string | null;
  createdAt: string;
  expiresAt: string;
  incarnation: number;
  workVersion: number | null;
  taskId: string | null;
  /** What the decision carried for its type (a question's `answer`); null for none. */
  response: Record<string, unknown> | null;
  /** What happens at `expiresAt` if nobody answers, e.g. "auto-rejects". */
  timeoutPolicy: string | null;
  /** The `type` a response to this request must carry. */
  responseType: string | null;
  /** How many different Leads must approve (the two-person rule). */
  requiredApprovals: number;
  /** Approvals recorded so far, oldest first (lib/requests/approvals.ts); empty unless two are required. */
  approvals: RequestApprovalView[];
  /** The earlier request of the same agent the Lead rejected that this one repeats. */
  askedAgainAfter: AskedAgainAfter | null;
};

export type ApprovalRow = RequestApproval & { user: Pick<User, "name" | "email"> };

export function toRequestApprovalView(row: ApprovalRow): RequestApprovalView {
  return {
    userId: row.userId,
    name: row.user.name,
    email: row.user.email,
    at: row.createdAt.toISOString(),
  };
}

export function directionOf(request: Pick<Request, "target">): Direction {
  return request.target === "lead" ? "agent_to_lead" : "lead_to_agent";
}

export function toRequestView(
  request: Request,
  approvals: readonly ApprovalRow[] = [],
): RequestView {
  const direction = directionOf(request);
  const definition = findProtocolType(request.type);
  return {
    id: request.id,
    type: request.type,
    status: request.status,
    sender: request.sender,
    target: request.target,
    agent: direction === "agent_to_lead" ? request.sender : request.target,
    payload: request.payload as Record<string, unknown>,
    feedback: request.feedback,
    respondedBy: request.respondedBy,
    decidedBy: request.decidedBy === null ? null : decidedBySchema.parse(request.decidedBy),
    respondedAt: request.respondedAt?.toISOString() ?? null,
    createdAt: request.createdAt.toISOString(),
    expiresAt: request.expiresAt.toISOString(),
    incarnation: request.incarnation,
    workVersion: request.workVersion,
    taskId: request.taskId,
    response: request.response as Record<string, unknown> | null,
    timeoutPolicy: definition
      ? describeTimeoutPolicy(
          definition.timeout(direction, request.payload as Record<string, unknown>).policy,
        )
      : null,
    responseType: definition?.responseType ?? null,
    requiredApprovals: request.requiredApprovals,
    approvals: approvals.map(toRequestApprovalView),
    askedAgainAfter:
      request.askedAgainAfter === null
        ? null
        : askedAgainAfterSchema.parse(request.askedAgainAfter),
  };
}
