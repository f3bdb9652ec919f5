"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { invalidateRequestsBesidesPending, queryKeys } from "@/components/realtime/query-keys";
import { Button } from "@/components/ui/button";
import type { BulkDecision } from "@/lib/shared/api/bulk-decision";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { RequestView } from "@/lib/requests/views";
import { withPendingRequest } from "./pending-patch";
import { typeLabel } from "./request-list";

type BulkInput = { ids: string[]; approve: boolean; feedback?: string };

/** "3 approved, 1 failed: brock's tool call: request … is already approved". */
export function summarizeBulkDecision(
  decision: BulkDecision,
  approve: boolean,
  items: readonly RequestView[],
): string {
  const done = decision.results.flatMap((result) => (result.ok ? [result] : []));
  // A two-Lead card stays pending after the first approval: it is not approved yet.
  const waiting = done.filter((result) => approve && result.request.status === "pending").length;
  const decided = done.length - waiting;
  const failures = decision.results.flatMap((result) => (result.ok ? [] : [result]));
  const verb = approve ? "approved" : "rejected";
  const outcome =
    waiting > 0
      ? `${decided} ${verb}, ${waiting} waiting for a second Lead's approval`
      : `${decided} ${verb}`;
  if (failures.length === 0) return outcome;
  const reasons = failures.map((failure) => {
    const request = items.find((item) => item.id === failure.id);
    const what = request
      ? `${request.agent}'s ${typeLabel(request.type).toLowerCase()}`
      : failure.id;
    return `${what}: ${failure.error.message}`;
  });
  return `${outcome}, ${failures.length} failed: ${reasons.join("; ")}`;
}

/**
 * One approve-or-reject, with one feedback, for the ticked requests. The server decides each on
 * its own; the ones it decided stay on screen showing their decision, like a single decision's.
 */
export function BulkBar({
  items,
  decidableCount,
  checkedIds,
  focusedAgent,
  onSelectAgent,
  onDecided,
  remember,
}: {
  items: readonly RequestView[];
  /** How many on screen a bulk decision could take; with none, only the last summary shows. */
  decidableCount: number;
  checkedIds: readonly string[];
  /** The agent of the request in view: "Select all from" offers it. */
  focusedAgent: string | null;
  onSelectAgent: (agent: string) => void;
  onDecided: () => void;
  remember: (request: RequestView) => void;
}) {
  const queryClient = useQueryClient();
  const feedbackId = useId();
  const [feedback, setFeedback] = useState("");
  const [summary, setSummary] = useState<string | null>(null);
  const decide = useMutation({
    mutationFn: (body: BulkInput) => apiFetch<BulkDecision>("/responses", { body }),
    onSuccess: (decision, { approve }) => {
      for (const result of decision.results) {
        if (!result.ok) continue;
        queryClient.setQueryData<RequestView[]>(queryKeys.pendingRequests, (list) =>
          withPendingRequest(list, result.request),
        );
        remember(result.request);
      }
      setSummary(summarizeBulkDecision(decision, approve, items));
      setFeedback("");
      onDecided();
    },
    onError: (error) => {
      setSummary(`Nothing decided: ${error.message}`);
      void queryClient.invalidateQueries({ queryKey: queryKeys.pendingRequests });
    },
    onSettled: () => invalidateRequestsBesidesPending(queryClient),
  });
  const count = checkedIds.length;
  const trimmed = feedback.trim();
  if (decidableCount === 0 && !summary) return null;

  function send(approve: boolean) {
    setSummary(null);
    decide.mutate({ ids: [...checkedIds], approve, ...(trimmed ? { feedback: trimmed } : {}) });
  }

  return (
    <section
      aria-label="Bulk decision"
      className="space-y-2 rounded-xl bg-white p-3 text-sm shadow-sm ring-1 ring-slate-200"
    >
      <div className="flex flex-wrap items-center gap-2">
        <span className="font-medium text-slate-800">{count} selected</span>
        {focusedAgent && decidableCount > 0 && (
          <Button
            variant="secondary"
            className="min-w-0 wrap-anywhere"
            onClick={() => onSelectAgent(focusedAgent)}
          >
            Select all from {focusedAgent}
          </Button>
        )}
      </div>
      {count > 0 && (
        <>
          <label htmlFor={feedbackId} className="block text-xs font-medium text-slate-700">
            Feedback for the selected requests (needed to reject)
          </label>
          <textarea
            id={feedbackId}
            rows={2}
            value={feedback}
            onChange={(event) => setFeedback(event.target.value)}
            className="block w-full rounded-md border-0 px-3 py-2 text-slate-900 shadow-sm ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600 focus:ring-inset"
          />
          <div className="flex flex-wrap gap-2">
            <Button disabled={decide.isPending} onClick={() => send(true)}>
              Approve {count}
            </Button>
            <Button
              variant="danger"
              disabled={decide.isPending || !trimmed}
              onClick={() => send(false)}
            >
              Reject {count}
            </Button>
          </div>
        </>
      )}
      <p role="status" className="text-slate-800 empty:hidden">
        {summary}
      </p>
    </section>
  );
}
