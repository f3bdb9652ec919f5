"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useRef, useState } from "react";
import { useConsoleEvent, useRequestRow } from "@/components/realtime/console-events";
import { invalidateRequestsBesidesPending, queryKeys } from "@/components/realtime/query-keys";
import { apiFetch, ApiRequestError } from "@/lib/shared/http/api-fetch";
import type { RequestView } from "@/lib/requests/views";
import {
  clearResolved,
  NO_RESOLVED_ROWS,
  patchFromSocketRow,
  patchPendingList,
  rememberResolved,
  RowReads,
  withPendingRequest,
  type ResolvedRows,
} from "./pending-patch";

/** The events whose row is patched from the event at once, then filled in by one fetch of it. */
const ENDED_WITH_FEEDBACK = new Set(["request.decided", "request.expired"]);

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
  const [resolvedRows, setResolvedRows] = useState<ResolvedRows>(NO_RESOLVED_ROWS);
  const resolved = resolvedRows.rows;
  const [conflicts, setConflicts] = useState<ReadonlySet<string>>(new Set());

  const pending = useQuery({
    queryKey: queryKeys.pendingRequests,
    queryFn: listAllPendingForLead,
  });

  const remember = useCallback((request: RequestView) => {
    setResolvedRows((current) => rememberResolved(current, request));
  }, []);

  const patchList = useCallback(
    (patch: (list: RequestView[] | undefined) => RequestView[] | undefined) =>
      queryClient.setQueryData<RequestView[]>(queryKeys.pendingRequests, patch),
    [queryClient],
  );

  const rowReads = useRef(new RowReads());
  function readRowIntoList(requestId: string): void {
    rowReads.current.start(requestId);
    void apiFetch<RequestView>(`/requests/${requestId}`).then(
      (request) => {
        if (rowReads.current.finish(requestId)) readRowIntoList(requestId);
        else patchList((current) => withPendingRequest(current, request));
      },
      () => {
        rowReads.current.finish(requestId);
        void queryClient.invalidateQueries({ queryKey: queryKeys.pendingRequests });
      },
    );
  }

  useConsoleEvent((event, rowFollows) => {
    if ("requestId" in event.data && typeof event.data.requestId === "string") {
      rowReads.current.noteEvent(event.data.requestId);
    }
    // A list fetch under way may have read before this event's commit: only a new read is right.
    if (queryClient.getQueryState(queryKeys.pendingRequests)?.fetchStatus === "fetching") {
      if (event.kind.startsWith("request.")) {
        void queryClient.invalidateQueries({ queryKey: queryKeys.pendingRequests });
      }
      return;
    }
    const { list, ended, fetchRow } = patchPendingList(
      queryClient.getQueryData<RequestView[]>(queryKeys.pendingRequests),
      event,
    );
    if (list !== queryClient.getQueryData(queryKeys.pendingRequests)) patchList(() => list);
    if (ended) {
      remember(ended);
      // Feedback and a question's answer are not in events: the one row brings them.
      if (ENDED_WITH_FEEDBACK.has(event.kind)) {
        void apiFetch<RequestView>(`/requests/${ended.id}`).then(remember, () => undefined);
      }
    }
    // The socket sends the row next (decision 035): awaited like a read, so an event overtaking it
    // is noticed.
    if (fetchRow && rowFollows) rowReads.current.start(fetchRow);
    else if (fetchRow) readRowIntoList(fetchRow);
  });

  useRequestRow((payload) => {
    const isOvertaken = rowReads.current.finish(payload.requestId);
    const current = queryClient.getQueryData<RequestView[]>(queryKeys.pendingRequests);
    const { list, fetchRow } = patchFromSocketRow(current, payload, isOvertaken);
    if (list !== current) patchList(() => list);
    if (fetchRow) readRowIntoList(fetchRow);
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
      patchList((list) => withPendingRequest(list, request));
      // A first of two approvals leaves the request pending, its row showing the count.
      if (request.status !== "pending") remember(request);
    },
    onError: (error, { id }) => {
      // Someone else decided first, or the deadline did: show how it ended in place, never an
      // error page, nor a card that vanishes on the next read.
      const isEnded =
        error instanceof ApiRequestError &&
        (error.code === "ALREADY_DECIDED" || error.code === "REQUEST_EXPIRED");
      if (isEnded) {
        const ended = error.error.request as RequestView;
        patchList((list) => withPendingRequest(list, ended));
        remember(ended);
        if (error.code === "ALREADY_DECIDED") setConflicts((current) => new Set(current).add(id));
        return;
      }
      // Any other refusal (a stale fence, a deadline passed): the list is read again.
      void queryClient.invalidateQueries({ queryKey: queryKeys.pendingRequests });
    },
    onSettled: () => invalidateRequestsBesidesPending(queryClient),
  });

  const items = useMemo(() => {
    const byId = new Map<string, RequestView>();
    for (const request of pending.data ?? []) byId.set(request.id, request);
    for (const [id, request] of resolved) byId.set(id, request);
    return [...byId.values()].sort(compareLongestBlockedFirst);
  }, [pending.data, resolved]);

  const pendingCount = items.filter((request) => request.status === "pending").length;
  const dismissResolved = useCallback(() => setResolvedRows(clearResolved), []);

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
