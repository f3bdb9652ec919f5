"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { useConsoleEvent } from "@/components/realtime/console-events";
import { queryKeys } from "@/components/realtime/query-keys";
import { apiFetch, ApiRequestError } from "@/lib/shared/http/api-fetch";
import type { RequestView } from "@/lib/requests/views";
import { withPendingRequest } from "./pending-patch";

const RESOLVING_KINDS = new Set([
  "request.decided",
  "request.expired",
  "request.cancelled",
  "request.superseded",
]);

/** `fields`: what the request's type adds to a decision (a question's `answer`). */
export type Decision = {
  id: string;
  approve: boolean;
  feedback?: string;
  fields?: Record<string, unknown>;
};

/** Oldest created first, ties by the earlier deadline: the longest-blocked agent comes first. */
export function compareLongestBlockedFirst(a: RequestView, b: RequestView): number {
  return (
    Date.parse(a.createdAt) - Date.parse(b.createdAt) ||
    Date.parse(a.expiresAt) - Date.parse(b.expiresAt) ||
    a.id.localeCompare(b.id)
  );
}

/** Every page, however many: a request past the first page waits longest, not least. */
async function listAllPendingForLead(): Promise<RequestView[]> {
  const items: RequestView[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({
      status: "pending",
      target: "lead",
      order: "oldest",
      limit: "200",
      ...(cursor ? { cursor } : {}),
    });
    const page: { items: RequestView[]; nextCursor: string | null } = await apiFetch(
      `/requests?${query.toString()}`,
    );
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/**
 * The Lead's pending requests, oldest (longest-blocked) first, plus the ones that were on screen
 * and got resolved elsewhere: those stay in place showing who decided, instead of vanishing.
 */
export function useInbox() {
  const queryClient = useQueryClient();
  const [resolved, setResolved] = useState<ReadonlyMap<string, RequestView>>(new Map());
  const [conflicts, setConflicts] = useState<ReadonlySet<string>>(new Set());

  const pending = useQuery({
    queryKey: queryKeys.pendingRequests,
    queryFn: listAllPendingForLead,
  });

  const remember = useCallback((request: RequestView) => {
    setResolved((current) => new Map(current).set(request.id, request));
  }, []);

  useConsoleEvent((event) => {
    // A new request for the Lead: fetch that one row and patch the list, instead of every page.
    // A list fetch already under way may have read before the commit: fetch the list again.
    if (event.kind === "request.created" && event.data.target === "lead") {
      const isListFetching =
        queryClient.getQueryState(queryKeys.pendingRequests)?.fetchStatus === "fetching";
      const refetchList = () =>
        queryClient.invalidateQueries({ queryKey: queryKeys.pendingRequests });
      if (isListFetching) {
        void refetchList();
        return;
      }
      void apiFetch<RequestView>(`/requests/${event.data.requestId}`).then(
        (request) =>
          queryClient.setQueryData<RequestView[]>(queryKeys.pendingRequests, (list) =>
            withPendingRequest(list, request),
          ),
        refetchList,
      );
      return;
    }
    const requestId = "requestId" in event.data ? event.data.requestId : undefined;
    if (!RESOLVING_KINDS.has(event.kind) || typeof requestId !== "string") return;
    const isOnScreen = pending.data?.some((request) => request.id === requestId) ?? false;
    if (!isOnScreen) return;
    void apiFetch<RequestView>(`/requests/${requestId}`).then(remember, () => undefined);
  });

  const decide = useMutation({
    mutationFn: async ({ id, approve, feedback, fields }: Decision) => {
      const request = pending.data?.find((item) => item.id === id) ?? resolved.get(id);
      return apiFetch<RequestView>(`/requests/${id}/responses`, {
        body: {
          ...fields,
          type: request?.responseType ?? "",
          approve,
          ...(feedback ? { feedback } : {}),
        },
      });
    },
    onSuccess: (request) => {
      // A first of two approvals leaves the request pending: the list's refetch shows it.
      if (request.status !== "pending") remember(request);
    },
    onError: (error, { id }) => {
      // Someone else decided first: show their decision in place, never an error page.
      if (error instanceof ApiRequestError && error.code === "ALREADY_DECIDED") {
        remember(error.error.request as RequestView);
        setConflicts((current) => new Set(current).add(id));
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.requests }),
  });

  const items = useMemo(() => {
    const byId = new Map<string, RequestView>();
    for (const request of pending.data ?? []) byId.set(request.id, request);
    for (const [id, request] of resolved) byId.set(id, request);
    return [...byId.values()].sort(compareLongestBlockedFirst);
  }, [pending.data, resolved]);

  const pendingCount = items.filter((request) => request.status === "pending").length;
  const dismissResolved = useCallback(() => setResolved(new Map()), []);

  return {
    items,
    pendingCount,
    isLoading: pending.isLoading,
    loadError: pending.error,
    decide,
    conflicts,
    dismissResolved,
    /** Keeps a request decided here (a bulk decision's) on screen with its decision. */
    remember,
  };
}
