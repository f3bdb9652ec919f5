"use client";

import { RequestSummary } from "@/components/history/request-text";
import { formatClock } from "@/components/ui/use-now";
import type { RequestView } from "@/lib/requests/views";
import { ApprovalCount } from "./approval-progress";
import { AskedAgain } from "./asked-again";
import { requestAge } from "./request-age";
import { isBulkDecidable } from "./use-bulk-selection";

const TYPE_LABELS: Record<string, string> = {
  plan_approval: "Plan",
  tool_approval: "Risky tool call",
  shutdown: "Asks to stop",
  question: "Question",
};

export function typeLabel(type: string): string {
  return TYPE_LABELS[type] ?? type;
}

/** The gate's judgement stored with a tool approval (`payload.risk.class`), for the list's badge. */
function riskOf(request: RequestView): string | null {
  const risk = request.payload.risk;
  if (typeof risk !== "object" || risk === null || !("class" in risk)) return null;
  return typeof risk.class === "string" ? risk.class.replaceAll("_", " ") : null;
}

export function RequestList({
  items,
  selectedId,
  now,
  onSelect,
  checkedIds,
  onCheck,
}: {
  items: RequestView[];
  selectedId: string | null;
  now: number;
  onSelect: (id: string) => void;
  /** Ticked for a bulk decision; items without a box (questions, decided ones) are never in it. */
  checkedIds?: ReadonlySet<string>;
  /** `isRange`: shift-click, ticking everything since the last box touched. */
  onCheck?: ((id: string, isRange: boolean) => void) | undefined;
}) {
  return (
    <ul
      aria-label="Pending requests"
      className="divide-y divide-slate-200 overflow-hidden rounded-xl bg-white shadow-sm ring-1 ring-slate-200"
    >
      {items.map((request) => {
        const isSelected = request.id === selectedId;
        const isPending = request.status === "pending";
        const remaining = Date.parse(request.expiresAt) - now;
        const risk = riskOf(request);
        const canCheck = onCheck !== undefined && isBulkDecidable(request);
        return (
          <li key={request.id} className="flex items-start">
            {canCheck && (
              <input
                type="checkbox"
                checked={checkedIds?.has(request.id) ?? false}
                onChange={(event) =>
                  onCheck(
                    request.id,
                    "shiftKey" in event.nativeEvent && event.nativeEvent.shiftKey === true,
                  )
                }
                aria-label={`Select ${typeLabel(request.type).toLowerCase()} from ${request.agent}`}
                className="mt-3.5 ml-3 h-4 w-4 shrink-0 rounded border-slate-300 text-indigo-600 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
              />
            )}
            <button
              type="button"
              onClick={() => onSelect(request.id)}
              aria-current={isSelected ? "true" : undefined}
              aria-label={`${typeLabel(request.type)} from ${request.agent}`}
              className={`flex w-full min-w-0 flex-col gap-1 px-4 py-3 text-left text-sm focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-indigo-600 ${isSelected ? "bg-indigo-50" : "hover:bg-slate-50"}`}
            >
              <span className="flex flex-wrap items-center gap-x-2 gap-y-1">
                <span className="min-w-0 font-semibold wrap-anywhere text-slate-900">
                  {request.agent}
                </span>
                <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700">
                  {typeLabel(request.type)}
                </span>
                <ApprovalCount request={request} />
                {risk && (
                  <span className="rounded bg-amber-100 px-1.5 py-0.5 text-xs text-amber-900">
                    risk: {risk}
                  </span>
                )}
                <span className="ml-auto text-xs text-slate-600">{requestAge(request, now)}</span>
              </span>
              <AskedAgain request={request} isCompact />
              <RequestSummary
                request={request}
                isInsideControl
                className="text-xs text-slate-700"
              />
              {isPending ? (
                <span
                  className={`text-xs ${remaining < 60_000 ? "text-rose-700" : "text-slate-600"}`}
                >
                  {request.timeoutPolicy ?? "expires"} in {formatClock(remaining)}
                </span>
              ) : (
                <span className="text-xs font-medium text-slate-600">{request.status}</span>
              )}
            </button>
          </li>
        );
      })}
    </ul>
  );
}
