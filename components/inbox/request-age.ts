import { formatAge } from "@/components/ui/use-now";
import type { RequestView } from "@/lib/requests/views";

/**
 * How long a request waited: ticking while it is pending, stopped at its answer once it has one
 * (a decided card kept counting "waiting 6m" beside "approved").
 */
export function requestAge(
  request: Pick<RequestView, "status" | "createdAt" | "respondedAt">,
  now: number,
): string {
  const asked = Date.parse(request.createdAt);
  if (request.status === "pending") return `waiting ${formatAge(now - asked)}`;
  if (request.respondedAt) return `waited ${formatAge(Date.parse(request.respondedAt) - asked)}`;
  return `asked ${formatAge(now - asked)} ago`;
}
