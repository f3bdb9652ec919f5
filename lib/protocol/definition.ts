import type { z } from "zod";
import type { AgentStatus, GateState } from "../shared/agents/schema";
import type { TimeoutPolicy } from "../shared/requests/schema";
import type { Agent, Request } from "../generated/prisma/client";
import { cutText } from "../shared/text/cut";

/** Who sent a request: an agent to the Lead, or the Lead to an agent. The target decides. */
export type Direction = "agent_to_lead" | "lead_to_agent";

/** The closed list of terminal outcomes a type may end in (`request_status` in the database). */
export const REQUEST_OUTCOMES = [
  "approved",
  "rejected",
  "expired",
  "answered",
  "unanswered",
] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/** What a timeout does to a request: the policy that acted, the status it ends in, its response. */
export type TimeoutOutcome = {
  policy: TimeoutPolicy;
  outcome: RequestOutcome;
  response?: Record<string, unknown>;
};

/**
 * What a definition may do to the world when its request is created or decided. The core supplies
 * these inside the deciding transaction, with the agent row already locked.
 */
export type EffectContext = {
  request: Request;
  agent: Agent;
  direction: Direction;
  setAgentState: (patch: { status?: AgentStatus; gate?: GateState }) => Promise<void>;
  /**
   * The agent's status once this request is answered: still waiting, as its type says, while
   * another request of this incarnation waits on the Lead (the newest), else `working`.
   */
  statusAfterAnswer: () => Promise<AgentStatus>;
  /** Ends the agent's incarnation now (forced stop): status `shutdown`, requests cancelled. */
  endIncarnation: (reason: string) => Promise<void>;
};

/** A decision as the core has checked it: the common fields, and the type's own (`fields`). */
export type ResponseDraft = {
  approve: boolean;
  feedback: string | null;
  fields: Record<string, unknown>;
};

export type ProtocolTypeDefinition = {
  type: string;
  responseType: string;
  /** Short noun for people: "plan", "shutdown", "tool call". */
  label: string;
  /** Validates what a sender submits; `preparePayload` may enrich it before it is stored. */
  payloadSchema: z.ZodType<Record<string, unknown>, unknown>;
  preparePayload?: (
    payload: Record<string, unknown>,
  ) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /**
   * The fields a decision may carry besides `{type, approve, feedback?}`; strict, so a field the
   * type does not know is refused (422 INVALID_RESPONSE) rather than silently dropped.
   */
  responseSchema: z.ZodType<Record<string, unknown>, unknown>;
  /**
   * Checks a decision against the request it answers and returns what is stored as the request's
   * `response` (null for nothing). Throws INVALID_RESPONSE for a decision the request cannot take.
   */
  prepareResponse?: (
    payload: Record<string, unknown>,
    draft: ResponseDraft,
  ) => Record<string, unknown> | null | Promise<Record<string, unknown> | null>;
  /**
   * Why one approve-or-reject for many requests (a bulk decision) cannot decide this type, when it
   * cannot: a decision that needs fields of its own (a question's answer) is made on its card.
   */
  bulkRefusal?: string;
  /** The text an inbox shows for the request. */
  summarize: (payload: Record<string, unknown>) => string;
  directions: readonly Direction[];
  /** Every status a request of this type can end in by a decision or a timeout. */
  outcomes: readonly RequestOutcome[];
  /** The outcome of a decision: `approve: true` or `false`. */
  decisionOutcome: (approve: boolean) => RequestOutcome;
  /** The agent's status while the request waits on its target; null leaves the status alone. */
  waitingStatus: (direction: Direction) => AgentStatus | null;
  defaultTimeoutSeconds: (direction: Direction) => number;
  timeout: (direction: Direction, payload: Record<string, unknown>) => TimeoutOutcome;
  /** A new request while one is pending: replace the old one, or hand back the pending one. */
  onDuplicatePending: "supersede" | "return_existing";
  /**
   * Duplicates are counted per value of this payload field instead of per agent (tool approvals:
   * per call hash), matching the database's partial unique index (migration 010).
   */
  onePendingPerPayloadField?: "callHash";
  /** With several pending per agent: how many one incarnation may have at once (a card flood). */
  maxPendingPerAgent?: number;
  /**
   * How long an agent that agreed to stop (status `stopping`) through this type may take to exit
   * before the sweeper forces the stop; DEFAULT_STOP_GRACE_SECONDS when unset.
   */
  stopGraceSeconds?: number;
  /** Fenced to the agent's work version and task as well as its incarnation (plans, tool calls). */
  isFencedToWork: boolean;
  /** Effects of a new request beyond `waitingStatus`, applied in the same agent update. */
  onCreated?: (context: EffectContext) => Promise<void>;
  onApproved: (context: EffectContext) => Promise<void>;
  onRejected: (context: EffectContext) => Promise<void>;
  /** Runs after the request is marked with its timeout outcome; applies the policy. */
  onExpired: (context: EffectContext) => Promise<void>;
};

/** An agent that says it is stopping, by a protocol type without its own grace period or by itself. */
export const DEFAULT_STOP_GRACE_SECONDS = 60;

/** The outcomes of a type that approves or rejects, and expires when nobody does. */
export const APPROVAL_OUTCOMES: readonly RequestOutcome[] = ["approved", "rejected", "expired"];

const SUMMARY_UNITS = 200;

/**
 * The text an inbox shows for a request: its first 200 UTF-16 units, never half a character. The
 * common submission sends the summary inside a group's JSON (decision 053).
 */
export function summaryOf(text: string): string {
  return cutText(text, SUMMARY_UNITS);
}

export function approvalOutcome(approve: boolean): RequestOutcome {
  return approve ? "approved" : "rejected";
}

/** Whether the policy's outcome counts as an approval in the response the sender receives. */
export function isApprovingPolicy(policy: TimeoutPolicy): boolean {
  return policy === "approve" || policy === "answer_default";
}

export function describeTimeoutPolicy(policy: TimeoutPolicy): string {
  switch (policy) {
    case "reject":
      return "auto-rejects";
    case "approve":
      return "auto-approves";
    case "deny":
      return "auto-denies";
    case "force_stop":
      return "force-stops";
    case "answer_default":
      return "answers the default";
    case "unanswered":
      return "goes unanswered";
    default: {
      const unreachable: never = policy;
      return unreachable;
    }
  }
}
