"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { invalidateRequestsBesidesPending, queryKeys } from "@/components/realtime/query-keys";
import { Button } from "@/components/ui/button";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { RequestView } from "@/lib/requests/views";
import { withPendingRequest } from "./pending-patch";

const EXTENSIONS = [
  { seconds: 10 * 60, label: "10 minutes" },
  { seconds: 60 * 60, label: "1 hour" },
  { seconds: 4 * 60 * 60, label: "4 hours" },
] as const;

/**
 * More time for a pending card before its timeout policy acts. The server bounds it (a day after
 * the request was asked) and says so; the new countdown is patched into the list from the answer.
 */
export function ExtendDeadline({ request }: { request: RequestView }) {
  const queryClient = useQueryClient();
  const selectId = useId();
  const [seconds, setSeconds] = useState<number>(EXTENSIONS[0].seconds);
  const extend = useMutation({
    mutationFn: (extendSeconds: number) =>
      apiFetch<RequestView>(`/requests/${request.id}/deadline`, { body: { extendSeconds } }),
    onSuccess: (extended) =>
      queryClient.setQueryData<RequestView[]>(queryKeys.pendingRequests, (list) =>
        withPendingRequest(list, extended),
      ),
    onSettled: () => invalidateRequestsBesidesPending(queryClient),
  });
  return (
    <div className="flex flex-wrap items-center gap-2 text-xs text-slate-700">
      <label htmlFor={selectId}>More time</label>
      <select
        id={selectId}
        value={seconds}
        onChange={(event) => setSeconds(Number(event.target.value))}
        className="rounded-md border-0 bg-white py-1 pr-7 pl-2 text-xs ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600"
      >
        {EXTENSIONS.map((option) => (
          <option key={option.seconds} value={option.seconds}>
            {option.label}
          </option>
        ))}
      </select>
      <Button
        variant="secondary"
        className="px-2 py-1 text-xs"
        disabled={extend.isPending}
        onClick={() => extend.mutate(seconds)}
      >
        Extend deadline
      </Button>
      {extend.error && (
        <p role="alert" className="basis-full text-rose-700">
          {extend.error.message}
        </p>
      )}
    </div>
  );
}
