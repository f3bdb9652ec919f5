import { REQUEST_STATUSES, type RequestStatus } from "@/lib/shared/requests/schema";

/** What the history page filters on, as it appears in the URL; "" means any. */
export type HistoryFilters = { agent: string; type: string; status: string; decider: string };

export const FILTER_NAMES = ["agent", "type", "status", "decider"] as const;

/** History is about outcomes: everything but what is still pending. */
export const DECIDED_STATUSES: readonly RequestStatus[] = REQUEST_STATUSES.filter(
  (status) => status !== "pending",
);

export function readHistoryFilters(
  params: Record<string, string | string[] | undefined>,
): HistoryFilters {
  const read = (name: string) => {
    const value = params[name];
    return (Array.isArray(value) ? value[0] : value)?.trim() ?? "";
  };
  const status = read("status");
  return {
    agent: read("agent"),
    type: read("type"),
    // An unknown status in a hand-edited URL falls back to every outcome instead of an error.
    status: (DECIDED_STATUSES as readonly string[]).includes(status) ? status : "",
    decider: read("decider"),
  };
}

/** The filters as a URL query, leaving out the ones set to "any". */
export function toSearchParams(filters: HistoryFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) if (filters[name]) params.set(name, filters[name]);
  return params;
}

/**
 * The export's path under /api/v1: every request these filters match (as the pages show them), as
 * one file.
 */
export function toExportPath(filters: HistoryFilters, format: "csv" | "jsonl"): string {
  const params = toSearchParams(filters);
  params.set("status", filters.status || DECIDED_STATUSES.join(","));
  params.set("format", format);
  return `/requests/export?${params.toString()}`;
}

/** The API query for one page: without a status filter, every decided status. */
export function toRequestsQuery(filters: HistoryFilters, limit: number, cursor: string | null) {
  const params = toSearchParams(filters);
  params.set("status", filters.status || DECIDED_STATUSES.join(","));
  params.set("limit", String(limit));
  if (cursor) params.set("cursor", cursor);
  return params.toString();
}
