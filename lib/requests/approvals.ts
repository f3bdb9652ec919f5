import type { Prisma, Request } from "../generated/prisma/client";
import type { AgentActor, HumanActor } from "../auth/actor";
import { hasSqlState, type Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import { decidedBySchema, type DecidedBy, type PersonDecidedBy } from "../shared/api/request";
import { toRequestView, type ApprovalRow, type RequestView } from "./views";

/** 1: any Lead decides alone; 2: the two-person rule (docs/decisions/023). */
export type RequiredApprovals = 1 | 2;

/** What a decision on a request that needs two Leads does next. */
export type ApprovalStep =
  /** A first approval: recorded, and the request stays pending for a second Lead. */
  | { kind: "recorded"; request: RequestView }
  /** The decision goes ahead with this provenance: a rejection, or the second Lead's approval. */
  | { kind: "decide"; decidedBy: DecidedBy; approvals: ApprovalRow[] };

const APPROVAL_USER = {
  select: { name: true, email: true, role: true, disabledAt: true },
} as const;

type StoredApproval = ApprovalRow & {
  user: { name: string; email: string; role: string; disabledAt: Date | null };
  /** Whether the Lead's role or standing changed after this approval (a `user.updated` event). */
  isStandingChangedSince: boolean;
};

/**
 * An approval counts while its Lead could still approve and has not changed since: a Lead
 * disabled or demoted after approving (perhaps because the account was taken over) no longer makes
 * half of a decision, nor does it again once re-enabled or promoted back.
 */
function isCounted(approval: StoredApproval): boolean {
  return (
    approval.user.role === "lead" &&
    approval.user.disabledAt === null &&
    !approval.isStandingChangedSince
  );
}

async function listStoredApprovals(db: Db, requestIds: string[]): Promise<StoredApproval[]> {
  if (requestIds.length === 0) return [];
  const approvals = await db.requestApproval.findMany({
    where: { requestId: { in: requestIds } },
    include: { user: APPROVAL_USER },
    orderBy: [{ createdAt: "asc" }, { userId: "asc" }],
  });
  if (approvals.length === 0) return [];
  // Every change of a role or standing writes a `user.updated` event (lib/users/mutations.ts).
  const lastChanges = await db.event.groupBy({
    by: ["subject"],
    where: {
      kind: "user.updated",
      subject: { in: [...new Set(approvals.map((approval) => `user:${approval.userId}`))] },
    },
    _max: { createdAt: true },
  });
  const lastChangeOf = new Map(lastChanges.map((row) => [row.subject, row._max.createdAt]));
  return approvals.map((approval) => {
    const lastChange = lastChangeOf.get(`user:${approval.userId}`);
    return {
      ...approval,
      isStandingChangedSince: !!lastChange && lastChange >= approval.createdAt,
    };
  });
}

/** The two Leads an approval names; null for any other ending (every approval is history then). */
function approvingUserIds(decidedBy: unknown): Set<string> | null {
  const parsed = decidedBySchema.safeParse(decidedBy);
  if (!parsed.success || parsed.data.kind !== "leads") return null;
  return new Set(parsed.data.approvals.map((person) => person.userId));
}

/**
 * The approvals of each of `requests` that needs more than one, by request id: while pending, those
 * that count; once approved, the two that decided; once ended otherwise, every approval it had.
 */
export async function findApprovals(
  db: Db,
  requests: readonly Pick<Request, "id" | "requiredApprovals" | "status" | "decidedBy">[],
): Promise<Map<string, ApprovalRow[]>> {
  const twoPerson = new Map(
    requests.filter((request) => request.requiredApprovals > 1).map((row) => [row.id, row]),
  );
  const byRequest = new Map<string, ApprovalRow[]>();
  for (const approval of await listStoredApprovals(db, [...twoPerson.keys()])) {
    const request = twoPerson.get(approval.requestId);
    const isShown =
      request?.status === "pending"
        ? isCounted(approval)
        : (approvingUserIds(request?.decidedBy)?.has(approval.userId) ?? true);
    if (!isShown) continue;
    byRequest.set(approval.requestId, [...(byRequest.get(approval.requestId) ?? []), approval]);
  }
  return byRequest;
}

/**
 * A pending request that a newer submission asks again with more approvals required (a rule
 * requiring two Leads was added meanwhile) now needs them too: the stricter answer wins.
 */
export async function raiseRequiredApprovals(
  tx: Db,
  request: Request,
  required: RequiredApprovals | undefined,
): Promise<Request> {
  if (required === undefined || required <= request.requiredApprovals) return request;
  return tx.request.update({ where: { id: request.id }, data: { requiredApprovals: required } });
}

/**
 * Whoever can make accounts or promote them must not be able to conjure a second Lead for a
 * request already waiting: the account must be older than the request, and its role and standing
 * must not have changed since (every such change writes a `user.updated` event).
 */
async function assertLeadBeforeRequest(tx: Db, userId: string, request: Request): Promise<void> {
  const [user, changes] = await Promise.all([
    tx.user.findUniqueOrThrow({ where: { id: userId }, select: { createdAt: true } }),
    tx.event.count({
      where: {
        subject: `user:${userId}`,
        kind: "user.updated",
        createdAt: { gte: request.createdAt },
      },
    }),
  ]);
  if (user.createdAt >= request.createdAt) {
    throw new AppError(
      "LEAD_ACCOUNT_TOO_NEW",
      `request ${request.id} was made before this account existed; under the two-person rule only Leads whose accounts are older than the request may approve it`,
    );
  }
  if (changes > 0) {
    throw new AppError(
      "LEAD_ACCOUNT_TOO_NEW",
      `this account's role or standing changed after request ${request.id} was made; under the two-person rule only accounts that were Leads before the request may approve it`,
    );
  }
}

function personOf(decidedBy: DecidedBy): PersonDecidedBy {
  if (decidedBy.kind === "human" || decidedBy.kind === "token") return decidedBy;
  throw new AppError("NOT_TARGET", "only a Lead approves a request that needs two Leads");
}

/**
 * The two-person rule's part of a decision, run inside `decideRequest`'s transaction after every
 * other check passed and while it holds the agent's row lock: every decision on the agent's
 * requests takes that lock first, so two Leads approving at once are serialised here and exactly
 * one of them makes the second approval. Null when the request needs one approval.
 *
 * `fields` are what the decision adds for its type beyond approve and feedback (an edited command
 * or plan): refused, because a second Lead would approve something the first never saw.
 */
export async function takeApprovalStep(
  tx: Db,
  request: Request,
  responder: HumanActor | AgentActor,
  decision: { approve: boolean; fields: Record<string, unknown>; decidedBy: DecidedBy },
): Promise<ApprovalStep | null> {
  if (request.requiredApprovals <= 1) return null;
  if (Object.keys(decision.fields).length > 0) {
    throw new AppError(
      "EDITS_NEED_ONE_LEAD",
      `request ${request.id} needs two Leads, and both must approve the same thing: decide it as asked (${Object.keys(decision.fields).join(", ")} cannot be changed here), or reject it with feedback`,
    );
  }
  const stored = await listStoredApprovals(tx, [request.id]);
  // Refusing is always safe: either Lead ends the request alone, however new the account.
  if (!decision.approve) {
    return { kind: "decide", decidedBy: decision.decidedBy, approvals: stored };
  }
  if (responder.kind !== "human") {
    throw new AppError("NOT_TARGET", `request ${request.id} is for two Leads to approve`);
  }
  // The request was read before its agent's lock was taken: a rejection or a supersession that
  // took the lock first may have ended it since, and a first approval, which no compare-and-set
  // guards, would be recorded on an ended request. Under the lock its status is the one that holds;
  // null leaves the caller's compare-and-set to refuse it as it is now.
  const current = await tx.request.findUnique({
    where: { id: request.id },
    select: { status: true },
  });
  if (current?.status !== "pending") return null;
  const person = personOf(decision.decidedBy);
  await assertLeadBeforeRequest(tx, responder.userId, request);
  if (stored.some((approval) => approval.userId === responder.userId)) {
    throw new AppError(
      "SECOND_LEAD_REQUIRED",
      `you already approved request ${request.id}; it needs the approval of a second, different Lead`,
      { details: { request: toRequestView(request, stored.filter(isCounted)) } },
    );
  }
  // Two is the most the database allows: with one approval counted, this one decides.
  const [first] = stored.filter(isCounted);
  const approval = await tx.requestApproval.create({
    data: {
      requestId: request.id,
      userId: responder.userId,
      decidedBy: person as Prisma.InputJsonObject,
    },
    include: { user: APPROVAL_USER },
  });
  if (first) {
    const firstPerson = personOf(decidedBySchema.parse(first.decidedBy));
    return {
      kind: "decide",
      decidedBy: { kind: "leads", approvals: [firstPerson, person] },
      approvals: [first, approval],
    };
  }
  const view = toRequestView(request, [approval]);
  await appendEvent(tx, "request.approval_recorded", `request:${request.id}`, {
    requestId: request.id,
    type: request.type,
    agent: view.agent,
    approvedBy: responder.email,
    approvals: 1,
    requiredApprovals: request.requiredApprovals,
  });
  return { kind: "recorded", request: view };
}

/**
 * A two-Lead rule raised the request after this decision read it: the database's check
 * (`requests_two_person_approval`) refuses one Lead's approval, and the Lead is told why instead of
 * getting a 500. Nothing was decided; approving again records the first of two approvals.
 */
export function refuseRaisedToTwoLeads(error: unknown): unknown {
  const isRaised =
    hasSqlState(error, "23514") &&
    error instanceof Error &&
    error.message.includes("requests_two_person_approval");
  if (!isRaised) return error;
  return new AppError(
    "SECOND_LEAD_REQUIRED",
    "a rule now asks two Leads to approve this request: nothing was decided; approve again to record the first approval",
  );
}
