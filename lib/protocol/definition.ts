import type { z } from "zod";
import type { AgentStatus, GateState } from "../shared/agents/schema";
import type { Agent, Request } from "../generated/prisma/client";

/** Who sent a request: an agent to the Lead, or the Lead to an agent. The target decides. */
export type Direction = "agent_to_lead" | "lead_to_agent";

/** What happens when nobody answers in time. */
export type TimeoutPolicy = "reject" | "approve" | "deny" | "force_stop";

/**
 * What a definition may do to the world when its request is created or decided. The core supplies
 * these inside the deciding transaction, with the agent row already locked.
 */
export type EffectContext = {
  request: Request;
  agent: Agent;
  direction: Direction;
  setAgentState: (patch: { status?: AgentStatus; gate?: GateState }) => Promise<void>;
  /** Whether another request of this incarnation still waits on the Lead. */
  isWaitingOnLead: () => Promise<boolean>;
  /** Ends the agent's incarnation now (forced stop): status `shutdown`, requests cancelled. */
  endIncarnation: (reason: string) => Promise<void>;
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
  /** The text an inbox shows for the request. */
  summarize: (payload: Record<string, unknown>) => string;
  directions: readonly Direction[];
  defaultTimeoutSeconds: (direction: Direction) => number;
  timeoutPolicy: (direction: Direction) => TimeoutPolicy;
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
  onCreated: (context: EffectContext) => Promise<void>;
  onApproved: (context: EffectContext) => Promise<void>;
  onRejected: (context: EffectContext) => Promise<void>;
  /** Runs after the request is marked expired; applies `timeoutPolicy`. */
  onExpired: (context: EffectContext) => Promise<void>;
};

/** An agent that says it is stopping, by a protocol type without its own grace period or by itself. */
export const DEFAULT_STOP_GRACE_SECONDS = 60;

/** Whether the policy's outcome counts as an approval in the response the sender receives. */
export function isApprovingPolicy(policy: TimeoutPolicy): boolean {
  return policy === "approve";
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
    default: {
      const unreachable: never = policy;
      return unreachable;
    }
  }
}
