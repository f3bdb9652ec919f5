import type { RequestView } from "@/lib/requests/views";

/**
 * The Lead's pending list with one request as it is now: added or replaced while it is pending
 * for the Lead, removed once it is not. A list not loaded yet stays unloaded: its first fetch
 * brings the request anyway.
 */
export function withPendingRequest(
  list: readonly RequestView[] | undefined,
  request: RequestView,
): RequestView[] | undefined {
  if (!list) return undefined;
  const others = list.filter((item) => item.id !== request.id);
  const isPendingForLead = request.status === "pending" && request.target === "lead";
  return isPendingForLead ? [...others, request] : others;
}
