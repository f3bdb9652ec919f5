import type { Prisma, PrismaClient, Agent, Request } from "../generated/prisma/client";
import type { AgentActor, HumanActor } from "../auth/actor";
import { lockActingAgent, lockAgent } from "../agents/data";
import { setAgentState, endIncarnation } from "../agents/state";
import { isAgentActive, type AgentStatus } from "../shared/agents/schema";
import { hasSqlState, type Db } from "../db";
import { AppError, invalidInput } from "../errors";
import type { EventPayload } from "../shared/events/catalog";
import { appendEvent } from "../events/mutations";
import { deliverMessage } from "../messages/deliver";
import {
  isApprovingPolicy,
  type Direction,
  type EffectContext,
  type ProtocolTypeDefinition,
} from "../protocol/definition";
import { getProtocolType } from "../protocol/registry";
import { canonicalJson } from "../protocol/canonical-json";
import type { DecidedBy } from "../shared/api/request";
import type { CreateRequestInput, RespondInput } from "./schema";
import { findEarlierRejection } from "./asked-again";
import { trySubmitCommonPlan } from "./common-submission";
import { tryDecideCommonRequest } from "./common-decision";
import { LATE_DECISION_SQLSTATE } from "./deadline";
import { decidedByOf, responderLabel } from "./decided-by";
import { newRequestId } from "./request-id";
import { rememberNewRequestRow } from "./new-rows";
import { directionOf, toRequestView, type RequestView } from "./views";
import { inTransaction } from "../transaction";
import {
  findApprovals,
  raiseRequiredApprovals,
  refuseRaisedToTwoLeads,
  takeApprovalStep,
  type RequiredApprovals,
} from "./approvals";
import { databaseNow, databaseNowMs } from "../database-clock";

export type Responder = HumanActor | AgentActor;
export type CreatedRequest = { request: RequestView; isCreated: boolean };

/**
 * Effects act on the agent as it is now. An ended incarnation (shutdown, crashed) stays ended: a
 * late decision on one of its orphaned requests is recorded but never brings the agent back.
 */
function effectContext(db: Db, request: Request, agent: Agent): EffectContext {
  const isEnded = !isAgentActive(agent.status);
  return {
    request,
    agent,
    direction: directionOf(request),
    statusAfterAnswer: async () => {
      const waiting = await db.request.findFirst({
        where: {
          agentId: agent.id,
          incarnation: agent.incarnation,
          status: "pending",
          target: "lead",
          id: { not: request.id },
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        select: { type: true },
      });
      return waiting
        ? (getProtocolType(waiting.type).waitingStatus("agent_to_lead") ?? "working")
        : "working";
    },
    setAgentState: async (patch) => {
      if (isEnded) return;
      const { stopGraceSeconds } = getProtocolType(request.type);
      await setAgentState(db, agent, { ...patch, stopGraceSeconds });
    },
    endIncarnation: async (reason) => {
      if (isEnded) return;
      await cancelPendingRequests(db, agent.id, reason, request.id);
      await endIncarnation(db, agent, { isForced: true, reason });
    },
  };
}

async function parsePayload(
  definition: ProtocolTypeDefinition,
  payload: unknown,
): Promise<Prisma.InputJsonObject> {
  const parsed = definition.payloadSchema.safeParse(payload);
  if (!parsed.success) throw invalidInput(parsed.error, "payload");
  const prepared = definition.preparePayload
    ? await definition.preparePayload(parsed.data)
    : parsed.data;
  return prepared as Prisma.InputJsonObject;
}

/**
 * Moves a pending request to a terminal status in one statement and returns it as stored; null if
 * someone else decided it first.
 */
async function compareAndSetStatus(
  db: Db,
  requestId: string,
  data: {
    status: Exclude<Request["status"], "pending">;
    feedback?: string | null;
    respondedBy: string;
    /** Set for decisions (approve, reject, expire); supersede and cancel leave it null. */
    decidedBy?: DecidedBy;
    /** What the decision carries for its type (a question's answer). */
    response?: Prisma.InputJsonObject | null;
  },
): Promise<Request | null> {
  const [updated] = await db.request.updateManyAndReturn({
    where: { id: requestId, status: "pending" },
    data: {
      ...data,
      response: data.response ?? undefined,
      respondedAt: databaseNow(),
    },
  });
  return updated ?? null;
}

export type NewRequest = {
  definition: ProtocolTypeDefinition;
  direction: Direction;
  agentId: string;
  payload: Prisma.InputJsonObject;
  idempotencyKey?: string | undefined;
  timeoutSeconds?: number | undefined;
  /** For agent senders: the incarnation their token belongs to. */
  senderIncarnation?: number;
  /** 2: two different Leads must approve (the two-person rule); requests to the Lead only. */
  requiredApprovals?: RequiredApprovals | undefined;
};

export async function createRequestInTransaction(
  tx: Db,
  input: NewRequest,
): Promise<CreatedRequest> {
  const { definition, direction } = input;
  if ((input.requiredApprovals ?? 1) > 1 && direction !== "agent_to_lead") {
    throw new AppError("INVALID_INPUT", "only requests to the Lead can need two Leads' approval");
  }
  const agent = await lockActingAgent(tx, input.agentId, input.senderIncarnation);
  // An agent that agreed to stop asks for no new work; saying it is done is all that is left.
  if (
    agent.status === "stopping" &&
    direction === "agent_to_lead" &&
    definition.type !== "shutdown"
  ) {
    throw new AppError("AGENT_STOPPING", "this agent agreed to stop; it asks for no new work");
  }
  if (input.idempotencyKey) {
    // Keys are scoped to the incarnation: a new incarnation reusing one asks a new question.
    const existing = await tx.request.findUnique({
      where: {
        agentId_incarnation_idempotencyKey: {
          agentId: agent.id,
          incarnation: agent.incarnation,
          idempotencyKey: input.idempotencyKey,
        },
      },
    });
    if (existing) {
      if (
        existing.type !== definition.type ||
        canonicalJson(existing.payload) !== canonicalJson(input.payload)
      ) {
        throw new AppError(
          "IDEMPOTENCY_KEY_REUSED",
          "this idempotency key was used for a different request; use a new key for a new request",
        );
      }
      return { request: toRequestView(existing), isCreated: false };
    }
  }
  const perField = definition.onePendingPerPayloadField;
  const pending = await tx.request.findFirst({
    where: {
      agentId: agent.id,
      type: definition.type,
      status: "pending",
      ...(perField
        ? { payload: { path: [perField], equals: String(input.payload[perField]) } }
        : {}),
    },
  });
  if (pending && definition.onDuplicatePending === "return_existing") {
    // One pending per agent and type, whichever way it goes (a shutdown the Lead asks for, or the
    // agent's "may I stop?"): the other side's is not this caller's to be handed as its own.
    const sender = direction === "agent_to_lead" ? agent.name : "lead";
    if (pending.sender !== sender) {
      throw new AppError(
        "REQUEST_PENDING",
        `a '${definition.type}' request from the other side is pending (${pending.id}): answer it instead`,
        { details: { requestId: pending.id } },
      );
    }
    const existing = await raiseRequiredApprovals(tx, pending, input.requiredApprovals);
    return { request: toRequestView(existing), isCreated: false };
  }
  if (pending && perField) {
    // The same call asked again while its card awaits a second Lead keeps that card: superseding
    // it threw the first Lead's approval away, and the two-Lead count with it.
    const recorded = (await findApprovals(tx, [pending])).get(pending.id) ?? [];
    if (recorded.length > 0) {
      const existing = await raiseRequiredApprovals(tx, pending, input.requiredApprovals);
      return { request: toRequestView(existing, recorded), isCreated: false };
    }
  }
  if (pending) {
    await compareAndSetStatus(tx, pending.id, {
      status: "superseded",
      feedback: "superseded by a newer request",
      respondedBy: "system",
    });
    await appendEvent(tx, "request.superseded", `request:${pending.id}`, {
      requestId: pending.id,
      agent: agent.name,
      type: pending.type,
    });
  }

  if (!pending && definition.maxPendingPerAgent !== undefined) {
    const open = await tx.request.count({
      where: { agentId: agent.id, type: definition.type, status: "pending" },
    });
    if (open >= definition.maxPendingPerAgent) {
      throw new AppError(
        "RATE_LIMITED",
        `at most ${definition.maxPendingPerAgent} pending '${definition.type}' requests per agent; wait for the Lead's answers`,
        { headers: { "retry-after": "5" } },
      );
    }
  }
  const isToLead = direction === "agent_to_lead";
  const timeoutSeconds = input.timeoutSeconds ?? definition.defaultTimeoutSeconds(direction);
  const askedAgainAfter = isToLead
    ? await findEarlierRejection(tx, agent.id, definition.type, input.payload)
    : null;
  const request = await tx.request.create({
    data: {
      id: newRequestId(),
      type: definition.type,
      agentId: agent.id,
      sender: isToLead ? agent.name : "lead",
      target: isToLead ? "lead" : agent.name,
      payload: input.payload,
      incarnation: agent.incarnation,
      workVersion: definition.isFencedToWork ? agent.workVersion : null,
      taskId: definition.isFencedToWork ? agent.taskId : null,
      idempotencyKey: input.idempotencyKey ?? null,
      // A newer ask never needs fewer Leads than the one it supersedes: the stricter answer wins.
      requiredApprovals: Math.max(input.requiredApprovals ?? 1, pending?.requiredApprovals ?? 1),
      expiresAt: new Date(databaseNowMs() + timeoutSeconds * 1000),
      ...(askedAgainAfter ? { askedAgainAfter } : {}),
    },
  });
  await applyCreatedEffects(tx, definition, request, agent);
  await deliverMessage(tx, {
    from: request.sender,
    to: request.target,
    agentId: isToLead ? null : agent.id,
    incarnation: isToLead ? null : agent.incarnation,
    type: definition.type,
    content: definition.summarize(request.payload as Record<string, unknown>),
    metadata: { requestId: request.id, incarnation: request.incarnation },
  });
  const view = toRequestView(request);
  await appendEvent(tx, "request.created", `request:${request.id}`, {
    requestId: request.id,
    type: request.type,
    agent: agent.name,
    sender: request.sender,
    target: request.target,
    expiresAt: view.expiresAt,
    timeoutPolicy: view.timeoutPolicy,
  });
  rememberNewRequestRow(view);
  return { request: view, isCreated: true };
}

/**
 * The agent waits in the status its request's type declares, changed together with whatever else
 * the type does on creation (a plan's gate), so the board sees one update.
 */
async function applyCreatedEffects(
  tx: Db,
  definition: ProtocolTypeDefinition,
  request: Request,
  agent: Agent,
): Promise<void> {
  const context = effectContext(tx, request, agent);
  const waitingStatus = definition.waitingStatus(context.direction);
  let waiting: { status?: AgentStatus } | null = waitingStatus ? { status: waitingStatus } : null;
  await definition.onCreated?.({
    ...context,
    setAgentState: async (patch) => {
      await context.setAgentState({ ...waiting, ...patch });
      waiting = null;
    },
  });
  if (waiting) await context.setAgentState(waiting);
}

/** An agent submits a request to the Lead (plan, tool call, "may I stop?"). */
export async function submitRequest(
  db: PrismaClient,
  actor: AgentActor,
  input: CreateRequestInput,
): Promise<CreatedRequest> {
  const definition = getProtocolType(input.type);
  if (!definition.directions.includes("agent_to_lead")) {
    throw new AppError("NOT_ALLOWED_TO_SEND", `agents cannot send '${input.type}' requests`);
  }
  const payload = await parsePayload(definition, input.payload);
  const common = await trySubmitCommonPlan(db, actor, definition, payload, input);
  if (common) return common;
  return inTransaction(db, (tx) =>
    createRequestInTransaction(tx, {
      definition,
      direction: "agent_to_lead",
      agentId: actor.agentId,
      payload,
      idempotencyKey: input.idempotencyKey,
      timeoutSeconds: input.timeoutSeconds,
      senderIncarnation: actor.incarnation,
    }),
  );
}

/** The Lead sends a request to an agent; `shutdown` is the built-in one. */
export async function sendLeadRequest(
  db: PrismaClient,
  agentId: string,
  input: { type: string; payload: Record<string, unknown>; timeoutSeconds?: number | undefined },
): Promise<CreatedRequest> {
  const definition = getProtocolType(input.type);
  if (!definition.directions.includes("lead_to_agent")) {
    throw new AppError("NOT_ALLOWED_TO_SEND", `the Lead cannot send '${input.type}' requests`);
  }
  const payload = await parsePayload(definition, input.payload);
  return inTransaction(db, (tx) =>
    createRequestInTransaction(tx, {
      definition,
      direction: "lead_to_agent",
      agentId,
      payload,
      timeoutSeconds: input.timeoutSeconds,
    }),
  );
}

function assertResponderIsTarget(request: Request, responder: Responder): void {
  if (request.target === "lead") {
    if (responder.kind === "human" && responder.role === "lead") return;
    throw new AppError("NOT_TARGET", `request ${request.id} is for the Lead to answer`);
  }
  if (responder.kind === "agent" && responder.name === request.target) return;
  throw new AppError(
    "NOT_TARGET",
    `request ${request.id} is for agent '${request.target}' to answer`,
  );
}

/**
 * A request already ended: REQUEST_EXPIRED when its deadline ended it (whether the sweeper got there
 * before this decision or the decision found it due), ALREADY_DECIDED otherwise.
 */
function alreadyDecided(request: Request): AppError {
  const view = toRequestView(request);
  return view.decidedBy?.kind === "timeout"
    ? new AppError(
        "REQUEST_EXPIRED",
        `request ${request.id} passed its deadline before the decision; it is ${request.status}`,
        { details: { request: view } },
      )
    : new AppError("ALREADY_DECIDED", `request ${request.id} is already ${request.status}`, {
        details: { request: view },
      });
}

/** Why `responder` may not decide `request` now, in the order the checks matter; null if it may. */
function findRefusal(
  request: Request,
  agent: Agent,
  responder: Responder,
  definition: ProtocolTypeDefinition,
): AppError | null {
  const stale = { details: { request: toRequestView(request) } };
  const isResponderStale =
    responder.kind === "agent" && responder.incarnation !== agent.incarnation;
  if (request.incarnation !== agent.incarnation || isResponderStale) {
    return new AppError(
      "STALE_INCARNATION",
      `request ${request.id} belongs to incarnation ${request.incarnation} of '${agent.name}', which has ended`,
      stale,
    );
  }
  if (request.status !== "pending") return alreadyDecided(request);
  if (
    definition.isFencedToWork &&
    (request.workVersion !== agent.workVersion || request.taskId !== agent.taskId)
  ) {
    return new AppError(
      "STALE_WORK_VERSION",
      `request ${request.id} was made for work version ${request.workVersion}; '${agent.name}' has moved on to ${agent.workVersion}`,
      stale,
    );
  }
  return null;
}

/**
 * The only way a request is decided. Every check runs inside one transaction holding the agent's
 * row lock, and the decision itself is a compare-and-set on `status = 'pending'`: of two Leads
 * clicking at once exactly one wins, and the other gets ALREADY_DECIDED with the winner. The common
 * case (one Lead, a plan or tool call as asked) is the same transaction in one statement; whatever
 * it does not recognise it leaves untouched, for the full path to decide or refuse.
 */
export async function decideRequest(
  db: PrismaClient,
  responder: Responder,
  requestId: string,
  input: RespondInput,
): Promise<RequestView> {
  return (
    (await tryDecideCommonRequest(db, responder, requestId, input)) ??
    decideRequestInFull(db, responder, requestId, input)
  );
}

/** `decideRequest` without its one-statement common case (lib/requests/common-decision.ts). */
export async function decideRequestInFull(
  db: PrismaClient,
  responder: Responder,
  requestId: string,
  input: RespondInput,
): Promise<RequestView> {
  try {
    return await decideInTransaction(db, responder, requestId, input);
  } catch (error) {
    if (!hasSqlState(error, LATE_DECISION_SQLSTATE)) throw error;
    throw await refuseLateDecision(db, requestId);
  }
}

/**
 * The database refused the decision by its own clock. The deadline has passed, so the request
 * expires now with its timeout policy, whether or not a sweeper got to it first.
 */
async function refuseLateDecision(db: PrismaClient, requestId: string): Promise<AppError> {
  const { agentId } = await db.request.findUniqueOrThrow({
    where: { id: requestId },
    select: { agentId: true },
  });
  await expireRequest(db, { id: requestId, agentId }, { isKnownDue: true });
  const stored = await db.request.findUniqueOrThrow({ where: { id: requestId } });
  return new AppError(
    "REQUEST_EXPIRED",
    `request ${requestId} passed its deadline before the decision; it is ${stored.status}`,
    { details: { request: toRequestView(stored) } },
  );
}

/**
 * The fields a decision adds for its type, checked by the type's own schema (unknown fields are
 * refused) and then against the request; what the type stores as the request's `response`.
 */
async function parseResponse(
  definition: ProtocolTypeDefinition,
  request: Request,
  input: RespondInput,
  feedback: string | null,
): Promise<{ response: Prisma.InputJsonObject | null; fields: Record<string, unknown> }> {
  const { type: _type, approve, feedback: _feedback, ...fields } = input;
  const parsed = definition.responseSchema.safeParse(fields);
  if (!parsed.success) {
    const { message, details } = invalidInput(parsed.error);
    throw new AppError(
      "INVALID_RESPONSE",
      `this '${definition.responseType}' cannot be taken: ${message}`,
      { details },
    );
  }
  const prepared = await definition.prepareResponse?.(request.payload as Record<string, unknown>, {
    approve,
    feedback,
    fields: parsed.data,
  });
  return { response: (prepared ?? null) as Prisma.InputJsonObject | null, fields: parsed.data };
}

async function decideInTransaction(
  db: PrismaClient,
  responder: Responder,
  requestId: string,
  input: RespondInput,
): Promise<RequestView> {
  return inTransaction(db, async (tx) => {
    const found = await tx.request.findUnique({ where: { id: requestId } });
    if (!found) throw new AppError("REQUEST_NOT_FOUND", `no request ${requestId}`);
    const definition = getProtocolType(found.type);
    if (input.type !== definition.responseType) {
      throw new AppError(
        "TYPE_MISMATCH",
        `a '${found.type}' request is answered with '${definition.responseType}', not '${input.type}'`,
      );
    }
    assertResponderIsTarget(found, responder);
    const feedback = input.feedback?.trim() || null;
    const { response, fields } = await parseResponse(definition, found, input, feedback);
    if (!input.approve && !feedback) {
      throw new AppError(
        "FEEDBACK_REQUIRED",
        "say why when you reject, so the other side can act on it",
      );
    }

    const agent = await lockAgent(tx, found.agentId);
    // A request's fence (incarnation, work version, task) never changes and the compare-and-set
    // re-checks its status, so the row read before the lock is enough to go ahead; the one write
    // no compare-and-set guards, a first approval of a two-Lead request, re-reads the status in
    // takeApprovalStep. A refusal re-reads the row under the lock, to report it as it is now.
    const isAllowed = findRefusal(found, agent, responder, definition) === null;
    const decidedBy = decidedByOf(responder);
    const step = isAllowed
      ? await takeApprovalStep(tx, found, responder, { approve: input.approve, fields, decidedBy })
      : null;
    if (step?.kind === "recorded") return step.request;
    const decided = isAllowed
      ? await compareAndSetStatus(tx, found.id, {
          status: definition.decisionOutcome(input.approve),
          feedback,
          respondedBy: responderLabel(responder),
          decidedBy: step?.decidedBy ?? decidedBy,
          response,
        }).catch((error: unknown) => {
          throw refuseRaisedToTwoLeads(error);
        })
      : null;
    if (!decided) {
      const current = await tx.request.findUniqueOrThrow({ where: { id: requestId } });
      throw findRefusal(current, agent, responder, definition) ?? alreadyDecided(current);
    }

    const context = effectContext(tx, decided, agent);
    await (input.approve ? definition.onApproved(context) : definition.onRejected(context));
    await answerRequest(
      tx,
      decided,
      {
        type: definition.responseType,
        content: feedback ?? "",
        metadata: {
          requestId: decided.id,
          approve: input.approve,
          status: decided.status,
          ...(response ? { response } : {}),
        },
      },
      {
        kind: "request.decided",
        data: {
          requestId: decided.id,
          type: decided.type,
          agent: agent.name,
          status: decided.status,
          respondedBy: decided.respondedBy,
          decidedBy: decided.decidedBy,
        },
      },
    );
    return toRequestView(decided, step?.approvals);
  });
}

type RequestEnding =
  | { kind: "request.decided"; data: EventPayload<"request.decided"> }
  | { kind: "request.expired"; data: EventPayload<"request.expired"> };

/**
 * The one way a request that has ended is answered: the answer message goes back to whoever sent
 * the request (the Lead's inbox, or the agent's current incarnation), and the event records it.
 */
async function answerRequest(
  tx: Db,
  request: Request,
  answer: { type: string; content: string; metadata: Prisma.InputJsonObject },
  ending: RequestEnding,
): Promise<void> {
  const isToLead = request.sender === "lead";
  await deliverMessage(tx, {
    from: request.target,
    to: request.sender,
    agentId: isToLead ? null : request.agentId,
    incarnation: isToLead ? null : request.incarnation,
    ...answer,
  });
  await appendEvent(tx, ending.kind, `request:${request.id}`, ending.data);
}

/** Cancels every pending request of an agent (its incarnation ended or was replaced). */
export async function cancelPendingRequests(
  db: Db,
  agentId: string,
  reason: string,
  exceptRequestId?: string,
): Promise<number> {
  const pending = await db.request.findMany({
    where: {
      agentId,
      status: "pending",
      ...(exceptRequestId ? { id: { not: exceptRequestId } } : {}),
    },
  });
  let cancelled = 0;
  for (const request of pending) {
    if (
      await compareAndSetStatus(db, request.id, {
        status: "cancelled",
        feedback: reason,
        respondedBy: "system",
      })
    ) {
      cancelled += 1;
      await appendEvent(db, "request.cancelled", `request:${request.id}`, {
        requestId: request.id,
        type: request.type,
        reason,
      });
    }
  }
  return cancelled;
}

const EXPIRY_BATCH = 50;
const EXPIRY_RETRY_MS = 60_000;
/** Due requests whose expiry failed on this node, and when it may try each again. */
const failedExpiries = new Map<string, number>();

/**
 * Expires one request and applies its type's timeout policy, under the agent's row lock: a
 * compare-and-set, so however many nodes and late deciders race for it, it happens once.
 * `isKnownDue`: the database has already judged the deadline passed (a refused late decision).
 * `now` is when the sweep judges it; a test sweeping ahead of the clock passes its own requests
 * here, as `expireDueRequests` would expire every file's (decision 079).
 */
export async function expireRequest(
  db: PrismaClient,
  { id, agentId }: { id: string; agentId: string },
  options: { now?: Date; isKnownDue?: boolean } = {},
): Promise<RequestView | null> {
  return inTransaction(db, async (tx) => {
    const agent = await lockAgent(tx, agentId);
    const request = await tx.request.findUniqueOrThrow({ where: { id } });
    const isDue = options.isKnownDue || request.expiresAt <= (options.now ?? databaseNow());
    if (request.status !== "pending" || !isDue) return null;
    const definition = getProtocolType(request.type);
    const direction = directionOf(request);
    const timeout = definition.timeout(direction, request.payload as Record<string, unknown>);
    const { policy } = timeout;
    const feedback = `timed out: ${policy.replace("_", " ")}`;
    const response = (timeout.response ?? null) as Prisma.InputJsonObject | null;
    const stored = await compareAndSetStatus(tx, id, {
      status: timeout.outcome,
      feedback,
      respondedBy: "system",
      decidedBy: { kind: "timeout", policy },
      response,
    });
    if (!stored) return null;
    await definition.onExpired(effectContext(tx, stored, agent));
    await answerRequest(
      tx,
      stored,
      {
        type: definition.responseType,
        content: feedback,
        metadata: {
          requestId: id,
          approve: isApprovingPolicy(policy),
          status: stored.status,
          policy,
          ...(response ? { response } : {}),
        },
      },
      {
        kind: "request.expired",
        data: {
          requestId: id,
          type: stored.type,
          agent: agent.name,
          policy,
          decidedBy: stored.decidedBy,
        },
      },
    );
    return toRequestView(stored);
  });
}

/**
 * Expires due requests and applies each type's timeout policy. Safe to run on every node at once:
 * each expiry is a compare-and-set under the agent's row lock, so it happens exactly once.
 */
export async function expireDueRequests(
  db: PrismaClient,
  now = databaseNow(),
): Promise<RequestView[]> {
  // A request whose expiry failed rests a while: at the head of the oldest-first batch, it and
  // its like would otherwise hold back every request behind them, at every sweep.
  for (const [id, retryAt] of failedExpiries) {
    if (retryAt <= now.getTime()) failedExpiries.delete(id);
  }
  const resting = [...failedExpiries.keys()];
  const due = await db.request.findMany({
    where: {
      status: "pending",
      expiresAt: { lte: now },
      ...(resting.length ? { id: { notIn: resting } } : {}),
    },
    orderBy: { expiresAt: "asc" },
    take: EXPIRY_BATCH,
    select: { id: true, agentId: true },
  });
  const expired: RequestView[] = [];
  const failures: string[] = [];
  for (const request of due) {
    try {
      const view = await expireRequest(db, request, { now });
      if (view) expired.push(view);
    } catch (error) {
      failedExpiries.set(request.id, now.getTime() + EXPIRY_RETRY_MS);
      failures.push(`${request.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (failures.length) {
    console.error(
      `[sweeper] ${failures.length} due request(s) not expired, tried again in ` +
        `${EXPIRY_RETRY_MS / 1000} s: ${failures[0]}`,
    );
  }
  return expired;
}
