/** Past-tense event kinds; the console and long-polls react to these. */
export const EVENT_KINDS = [
  "request.created",
  "request.decided",
  "request.expired",
  "request.superseded",
  "request.cancelled",
  "agent.registered",
  "agent.respawned",
  "agent.updated",
  "agent.stopped",
  "message.sent",
  "tool.allowed",
  "tool.blocked",
  "task.created",
  "task.updated",
  "user.created",
  "audit.pruned",
  "user.updated",
  "session.ended",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];
