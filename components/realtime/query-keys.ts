import type { EventKind } from "@/lib/shared/events/catalog";

/** One place for query keys, so events invalidate exactly what they change. */
export const queryKeys = {
  requests: ["requests"] as const,
  pendingRequests: ["requests", "pending"] as const,
  request: (id: string) => ["requests", "one", id] as const,
  history: (filters: Record<string, string>) => ["requests", "history", filters] as const,
  agents: ["agents"] as const,
  /** The team board: patched row by row from events, never invalidated by them (decision 019). */
  team: ["team"] as const,
  agent: (name: string) => ["agents", "one", name] as const,
  timeline: (name: string) => ["timeline", name] as const,
  tasks: ["tasks"] as const,
  tokens: ["tokens"] as const,
  rules: ["rules"] as const,
};

type QueryKeys = readonly (readonly string[])[];

const REQUEST_KEYS: QueryKeys = [queryKeys.requests, queryKeys.agents, ["timeline"]];
/** The pending list is patched (`PATCHED_KEYS`): a new request is one row, not a refetch. */
const CREATED_REQUEST_KEYS: QueryKeys = [
  ["requests", "history"],
  ["requests", "one"],
  queryKeys.agents,
  ["timeline"],
];
const AGENT_KEYS: QueryKeys = [queryKeys.agents, queryKeys.requests, ["timeline"]];
const ACTIVITY_KEYS: QueryKeys = [queryKeys.agents, ["timeline"]];
const TASK_KEYS: QueryKeys = [queryKeys.tasks, queryKeys.agents];

/**
 * Which cached data each event kind makes stale. Coarse on purpose: refetching is cheap, drift
 * isn't. A Record over every kind, so a kind added to the catalog without an entry here fails to
 * compile (tests/events/catalog-types.test.ts).
 */
export const STALE_KEYS: Record<EventKind, QueryKeys> = {
  "request.created": CREATED_REQUEST_KEYS,
  "request.decided": REQUEST_KEYS,
  "request.expired": REQUEST_KEYS,
  "request.approval_recorded": REQUEST_KEYS,
  "request.superseded": REQUEST_KEYS,
  "request.deadline_extended": REQUEST_KEYS,
  "request.cancelled": REQUEST_KEYS,
  "agent.registered": AGENT_KEYS,
  "agent.respawned": AGENT_KEYS,
  "agent.updated": AGENT_KEYS,
  "agent.stopped": AGENT_KEYS,
  "message.sent": ACTIVITY_KEYS,
  "tool.allowed": ACTIVITY_KEYS,
  "tool.blocked": ACTIVITY_KEYS,
  "task.created": TASK_KEYS,
  "task.updated": TASK_KEYS,
  "rule.created": [queryKeys.rules],
  "rule.updated": [queryKeys.rules],
  "rule.deleted": [queryKeys.rules],
  // The console's own session is rechecked by the server, which ends the socket if it must.
  "user.updated": [],
  "session.ended": [],
  "audit.pruned": [],
};

/**
 * Data an event changes that a hook patches in place (use-inbox.ts): marked stale without a
 * refetch, so a page that mounts later still fetches it, and the patch makes it fresh again.
 */
export const PATCHED_KEYS: Partial<Record<EventKind, QueryKeys>> = {
  "request.created": [queryKeys.pendingRequests],
};

export function patchedKeysFor(kind: EventKind): QueryKeys {
  return PATCHED_KEYS[kind] ?? [];
}

export function staleKeysFor(kind: EventKind): QueryKeys {
  // A server newer than this page may send a kind it does not know yet.
  return STALE_KEYS[kind] ?? [];
}
