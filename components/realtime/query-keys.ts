import type { QueryClient } from "@tanstack/react-query";
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

/**
 * The request queries except the Lead's pending list, which events patch row by row
 * (components/inbox/pending-patch.ts): refetching every page per event is what made a decision
 * slow to leave the screen.
 */
const REQUEST_KEYS_BESIDES_PENDING: QueryKeys = [
  ["requests", "history"],
  ["requests", "one"],
];
const REQUEST_KEYS: QueryKeys = [...REQUEST_KEYS_BESIDES_PENDING, queryKeys.agents, ["timeline"]];
// Every change to a request has its own request.* event: an agent's event leaves the list alone.
const AGENT_KEYS: QueryKeys = [queryKeys.agents, ...REQUEST_KEYS_BESIDES_PENDING, ["timeline"]];
const ACTIVITY_KEYS: QueryKeys = [queryKeys.agents, ["timeline"]];
const TASK_KEYS: QueryKeys = [queryKeys.tasks, queryKeys.agents];

/**
 * Which cached data each event kind makes stale. Coarse on purpose: refetching is cheap, drift
 * isn't. A Record over every kind, so a kind added to the catalog without an entry here fails to
 * compile (tests/events/catalog-types.test.ts).
 */
export const STALE_KEYS: Record<EventKind, QueryKeys> = {
  "request.created": REQUEST_KEYS,
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
  "request.decided": [queryKeys.pendingRequests],
  "request.expired": [queryKeys.pendingRequests],
  "request.approval_recorded": [queryKeys.pendingRequests],
  "request.superseded": [queryKeys.pendingRequests],
  "request.deadline_extended": [queryKeys.pendingRequests],
  "request.cancelled": [queryKeys.pendingRequests],
};

/** After the Lead's own change: what it may have changed, the pending list being patched. */
export function invalidateRequestsBesidesPending(queryClient: QueryClient): Promise<void[]> {
  return Promise.all(
    REQUEST_KEYS_BESIDES_PENDING.map((queryKey) => queryClient.invalidateQueries({ queryKey })),
  );
}

export function patchedKeysFor(kind: EventKind): QueryKeys {
  return PATCHED_KEYS[kind] ?? [];
}

export function staleKeysFor(kind: EventKind): QueryKeys {
  // A server newer than this page may send a kind it does not know yet.
  return STALE_KEYS[kind] ?? [];
}
