/** One place for query keys, so events invalidate exactly what they change. */
export const queryKeys = {
  requests: ["requests"] as const,
  pendingRequests: ["requests", "pending"] as const,
  request: (id: string) => ["requests", "one", id] as const,
  history: (filters: Record<string, string>) => ["requests", "history", filters] as const,
  agents: ["agents"] as const,
  agent: (name: string) => ["agents", "one", name] as const,
  timeline: (name: string) => ["timeline", name] as const,
  tasks: ["tasks"] as const,
  tokens: ["tokens"] as const,
};

/** Which cached data an event kind makes stale. Coarse on purpose: refetching is cheap, drift isn't. */
export function staleKeysFor(kind: string): readonly (readonly string[])[] {
  if (kind.startsWith("request.")) return [queryKeys.requests, queryKeys.agents, ["timeline"]];
  if (kind.startsWith("agent.")) return [queryKeys.agents, queryKeys.requests, ["timeline"]];
  if (kind.startsWith("tool.") || kind === "message.sent") return [queryKeys.agents, ["timeline"]];
  if (kind.startsWith("task.")) return [queryKeys.tasks, queryKeys.agents];
  return [];
}
