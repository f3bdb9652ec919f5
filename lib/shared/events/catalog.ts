import { z } from "zod";
import { agentStatusSchema, gateStateSchema, toolHostSchema } from "../agents/schema";

/**
 * Every event kind and what its `data` carries: the one place a new kind starts. An event names
 * what changed (kind + subject) and carries the small view a list row needs to patch itself, never
 * the changed record in full (docs/PROTOCOL.md, "What an event carries"). `appendEvent` is typed by
 * this table, so a payload that drifts from it fails to compile, and the console's `staleKeysFor`
 * is a Record over its kinds, so a kind nobody handles fails to compile too.
 */
const agentName = z.string();
const requestId = z.string();
const incarnation = z.number().int();
/** tool.allowed and tool.blocked: the gate's verdict on one call. */
const toolVerdict = z.object({
  agent: agentName,
  tool: z.string(),
  gate: gateStateSchema,
  riskClass: z.string(),
  code: z.string().optional(),
  requestId: requestId.optional(),
  /** The rule that decided, and what a shadow rule would have done (docs/decisions/022). */
  ruleId: z.string().optional(),
  shadowRuleId: z.string().optional(),
  shadowEffect: z.string().optional(),
});
/** rule.created, rule.updated, rule.deleted: the Rules page refetches. */
const ruleChange = z.object({
  ruleId: z.string(),
  pattern: z.string(),
  effect: z.string(),
  mode: z.string(),
  by: z.string(),
});

export const EVENT_PAYLOAD_SCHEMAS = {
  "request.created": z.object({
    requestId,
    type: z.string(),
    agent: agentName,
    sender: z.string(),
    target: z.string(),
    expiresAt: z.string().nullable(),
    /** What happens at `expiresAt` ("auto-rejects"), so a board row shows its countdown unfetched. */
    timeoutPolicy: z.string().nullable().optional(),
  }),
  "request.decided": z.object({
    requestId,
    type: z.string(),
    agent: agentName,
    status: z.string(),
    respondedBy: z.string().nullable(),
    decidedBy: z.unknown(),
  }),
  "request.expired": z.object({
    requestId,
    type: z.string(),
    agent: agentName,
    policy: z.string(),
    decidedBy: z.unknown(),
  }),
  /** The first of two Leads approved; the request stays pending (the two-person rule). */
  "request.approval_recorded": z.object({
    requestId,
    type: z.string(),
    agent: agentName,
    approvedBy: z.string(),
    approvals: z.number().int(),
    requiredApprovals: z.number().int(),
  }),
  "request.superseded": z.object({ requestId, agent: agentName, type: z.string() }),
  /** A Lead gave a pending request more time; `expiresAt` is its new deadline. */
  "request.deadline_extended": z.object({
    requestId,
    type: z.string(),
    agent: agentName,
    expiresAt: z.string(),
    extendedBy: z.string(),
  }),
  "request.cancelled": z.object({ requestId, type: z.string(), reason: z.string() }),
  "agent.registered": z.object({ agent: agentName, incarnation, role: z.string() }),
  "agent.respawned": z.object({
    agent: agentName,
    incarnation,
    previousIncarnation: incarnation,
  }),
  "agent.updated": z.object({
    agent: agentName,
    incarnation,
    status: agentStatusSchema,
    gate: gateStateSchema,
    workVersion: z.number().int(),
    taskId: z.string().nullable(),
    toolHost: toolHostSchema.nullable(),
  }),
  "agent.stopped": z.object({
    agent: agentName,
    incarnation,
    status: agentStatusSchema,
    isForced: z.boolean(),
    reason: z.string(),
  }),
  "message.sent": z.object({
    messageId: z.number().int(),
    from: z.string(),
    to: z.string(),
    type: z.string(),
    requestId: requestId.optional(),
  }),
  "tool.allowed": toolVerdict,
  "tool.blocked": toolVerdict,
  "rule.created": ruleChange,
  "rule.updated": ruleChange,
  "rule.deleted": ruleChange,
  "task.created": z.object({ taskId: z.string(), title: z.string() }),
  "task.updated": z.object({ taskId: z.string(), status: z.string(), agent: agentName }),
  "user.updated": z.object({
    userId: z.string(),
    role: z.string(),
    disabled: z.boolean(),
    by: z.string(),
  }),
  "session.ended": z.object({ userId: z.string() }),
  "audit.pruned": z.object({
    before: z.string(),
    events: z.number().int(),
    requests: z.number().int(),
    toolCalls: z.number().int(),
  }),
} as const;

export type EventKind = keyof typeof EVENT_PAYLOAD_SCHEMAS;
export type EventPayload<K extends EventKind> = z.infer<(typeof EVENT_PAYLOAD_SCHEMAS)[K]>;

/** One event as the log stores it and the console receives it, discriminated by `kind`. */
export type ConsoleEvent = {
  [K in EventKind]: { id: number; kind: K; subject: string; at: string; data: EventPayload<K> };
}[EventKind];

/** Narrows an event to one kind with its payload checked, for readers that trust nothing. */
export function parseEventData<K extends EventKind>(
  kind: K,
  data: unknown,
): EventPayload<K> | null {
  const parsed = EVENT_PAYLOAD_SCHEMAS[kind].safeParse(data);
  return parsed.success ? (parsed.data as EventPayload<K>) : null;
}
