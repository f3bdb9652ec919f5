"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import { EditedSummary } from "@/components/inbox/edit-call";
import { FileDiffDisclosure } from "@/components/inbox/file-diff";
import { queryKeys } from "@/components/realtime/query-keys";
import { fetchTeam } from "@/components/team/use-team";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { SelectField } from "@/components/ui/select-field";
import { TextField } from "@/components/ui/text-field";
import { VisibleText } from "@/components/ui/visible-text";
import {
  apiFetch,
  ApiRequestError,
  consoleFetch,
  readApiResponse,
} from "@/lib/shared/http/api-fetch";
import type { RequestView } from "@/lib/requests/views";
import {
  DECIDED_STATUSES,
  toExportPath,
  toRequestsQuery,
  toSearchParams,
  type HistoryFilters,
} from "./history-filters";
import { describeDecider } from "@/lib/shared/display/decided-by";
import { describeRequestType, OutcomeBadge, RequestSummary } from "./request-text";

const PAGE_SIZE = 25;
const TYPING_PAUSE_MS = 400;

type RequestPage = { items: RequestView[]; nextCursor: string | null };

/** Filters come from the URL; one the API refuses stays refused, so say so at once. */
function shouldRetry(failureCount: number, error: Error): boolean {
  return failureCount < 1 && !(error instanceof ApiRequestError && error.status < 500);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

function When({ at }: { at: string | null }) {
  if (!at) return <span className="text-slate-400">—</span>;
  return (
    <time dateTime={at} className="whitespace-nowrap tabular-nums">
      {dateTime.format(new Date(at))}
    </time>
  );
}

function HistoryTable({ items }: { items: RequestView[] }) {
  return (
    <div className="relative overflow-x-auto rounded-xl bg-white shadow-sm ring-1 ring-slate-200">
      <table className="w-full min-w-[56rem] text-left text-sm">
        <caption className="sr-only">Decided requests, the most recently asked first</caption>
        <thead className="border-b border-slate-200 bg-slate-50 text-xs font-medium text-slate-600">
          <tr>
            <th scope="col" className="px-4 py-2.5">
              Decided
            </th>
            <th scope="col" className="px-4 py-2.5">
              Agent
            </th>
            <th scope="col" className="px-4 py-2.5">
              Request
            </th>
            <th scope="col" className="px-4 py-2.5">
              Status
            </th>
            <th scope="col" className="px-4 py-2.5">
              Decided by
            </th>
            <th scope="col" className="px-4 py-2.5">
              Feedback
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {items.map((request) => (
            <tr key={request.id} data-request-id={request.id} className="align-top">
              <td className="px-4 py-3 text-slate-700">
                <When at={request.respondedAt} />
                <div className="mt-0.5 text-xs text-slate-500">
                  asked <When at={request.createdAt} />
                </div>
              </td>
              <td className="px-4 py-3">
                <Link
                  href={`/agents/${request.agent}`}
                  className="rounded font-medium text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
                >
                  {request.agent}
                </Link>
              </td>
              <td className="max-w-xs px-4 py-3">
                <div className="font-medium text-slate-900">
                  {describeRequestType(request.type)}
                  {request.sender === "lead" && (
                    <span className="font-normal text-slate-500"> · from the Lead</span>
                  )}
                </div>
                <RequestSummary request={request} className="mt-0.5 text-xs text-slate-600" />
                <EditedSummary request={request} />
                <FileDiffDisclosure payload={request.payload} />
              </td>
              <td className="px-4 py-3">
                <OutcomeBadge status={request.status} />
              </td>
              <td className="px-4 py-3 break-all text-slate-700">{describeDecider(request)}</td>
              <td className="max-w-sm px-4 py-3 text-slate-700">
                {request.feedback !== null ? (
                  <VisibleText text={request.feedback} maxCharacters={300} />
                ) : (
                  <span className="text-slate-400">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One history filter: "any" first (the empty value), then each value. */
function FilterSelect({
  label,
  anyLabel,
  value,
  values,
  describe = (option) => option,
  onChange,
}: {
  label: string;
  anyLabel: string;
  value: string;
  values: readonly string[];
  describe?: (value: string) => string;
  onChange: (value: string) => void;
}) {
  return (
    <SelectField label={label} value={value} onChange={(event) => onChange(event.target.value)}>
      <option value="">{anyLabel}</option>
      {values.map((option) => (
        <option key={option} value={option}>
          {describe(option)}
        </option>
      ))}
    </SelectField>
  );
}

const EXPORT_FORMATS = [
  { format: "csv", label: "CSV" },
  { format: "jsonl", label: "JSON Lines" },
] as const;

const EXPORT_FILE_NAME = /filename="([^"]+)"/;

/**
 * Fetched with the session's key, which a link cannot send (decision 080), then handed to the
 * browser as the file the server named.
 */
async function downloadExport(path: string): Promise<void> {
  const response = await consoleFetch(path);
  if (!response.ok) await readApiResponse(response);
  const name = EXPORT_FILE_NAME.exec(response.headers.get("content-disposition") ?? "")?.[1];
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = name ?? "handshake-requests";
  link.click();
  // Not at once: the browser reads the blob after the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Downloads of everything the current filters match, not only the pages loaded. */
function ExportButtons({ filters }: { filters: HistoryFilters }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <nav aria-label="Export history" className="flex items-center gap-2 text-sm">
      <span className="text-slate-600">Export:</span>
      {EXPORT_FORMATS.map(({ format, label }) => (
        <button
          key={format}
          type="button"
          onClick={() => {
            setError(null);
            downloadExport(toExportPath(filters, format)).catch((failure: unknown) =>
              setError(failure instanceof Error ? failure.message : "the export failed"),
            );
          }}
          aria-label={`Export ${label}`}
          className="rounded-md bg-white px-3 py-1.5 font-semibold text-slate-900 shadow-sm ring-1 ring-slate-300 ring-inset hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          {label}
        </button>
      ))}
      <ErrorAlert message={error} />
    </nav>
  );
}

export function HistoryView({
  initialFilters,
  requestTypes,
}: {
  initialFilters: HistoryFilters;
  requestTypes: readonly string[];
}) {
  const [filters, setFilters] = useState(initialFilters);
  const [deciderText, setDeciderText] = useState(initialFilters.decider);

  function applyFilter(name: keyof HistoryFilters, value: string) {
    const next = { ...filters, [name]: value };
    setFilters(next);
    const query = toSearchParams(next).toString();
    // Next's router follows history.replaceState, so the URL stays shareable without a round trip.
    window.history.replaceState(null, "", query ? `?${query}` : window.location.pathname);
  }

  useEffect(() => {
    const decider = deciderText.trim();
    if (decider === filters.decider) return;
    const timer = setTimeout(() => applyFilter("decider", decider), TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  });

  // Every agent that ever ran may be filtered on, not only those the board shows.
  const team = useQuery({ queryKey: queryKeys.agents, queryFn: () => fetchTeam("all") });
  const agentNames = [
    ...new Set([...(team.data?.items.map((member) => member.name) ?? []), filters.agent]),
  ]
    .filter(Boolean)
    .sort();

  const history = useInfiniteQuery({
    queryKey: queryKeys.history(filters),
    queryFn: ({ pageParam }) =>
      apiFetch<RequestPage>(`/requests?${toRequestsQuery(filters, PAGE_SIZE, pageParam)}`),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.nextCursor,
    retry: shouldRetry,
  });
  const items = history.data?.pages.flatMap((page) => page.items) ?? [];
  const hasFilters = Object.values(filters).some(Boolean);

  return (
    <section aria-labelledby="history-heading" className="space-y-5">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 id="history-heading" className="text-2xl font-semibold tracking-tight">
            History
          </h1>
          <p className="mt-1 text-sm text-slate-600">
            Every decided, expired, cancelled and superseded request, the most recently asked first.
          </p>
        </div>
        <ExportButtons filters={filters} />
      </div>

      <form
        aria-label="Filter history"
        onSubmit={(event) => {
          event.preventDefault();
          applyFilter("decider", deciderText.trim());
        }}
        className="grid gap-3 rounded-xl bg-white p-4 shadow-sm ring-1 ring-slate-200 sm:grid-cols-2 lg:grid-cols-[repeat(4,minmax(0,1fr))_auto] lg:items-end"
      >
        <FilterSelect
          label="Agent"
          anyLabel="All agents"
          value={filters.agent}
          values={agentNames}
          onChange={(value) => applyFilter("agent", value)}
        />
        <FilterSelect
          label="Type"
          anyLabel="All types"
          value={filters.type}
          values={requestTypes}
          describe={describeRequestType}
          onChange={(value) => applyFilter("type", value)}
        />
        <FilterSelect
          label="Status"
          anyLabel="All decided"
          value={filters.status}
          values={DECIDED_STATUSES}
          onChange={(value) => applyFilter("status", value)}
        />
        <TextField
          label="Decided by"
          type="search"
          placeholder="email, agent or system"
          value={deciderText}
          onChange={(event) => setDeciderText(event.target.value)}
        />
        <Button
          variant="ghost"
          disabled={!hasFilters}
          onClick={() => {
            setDeciderText("");
            setFilters({ agent: "", type: "", status: "", decider: "" });
            window.history.replaceState(null, "", window.location.pathname);
          }}
        >
          Clear filters
        </Button>
      </form>

      <ErrorAlert
        message={history.error ? `Could not load history: ${history.error.message}` : null}
      />

      {history.isPending ? (
        <p className="text-sm text-slate-600" role="status">
          Loading history…
        </p>
      ) : items.length === 0 ? (
        history.error ? null : (
          <div className="rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
            <p className="text-base font-medium">
              {hasFilters ? "No requests match these filters." : "Nothing has been decided yet."}
            </p>
            <p className="mt-1 text-sm text-slate-600">
              Decisions, timeouts and cancellations appear here as they happen.
            </p>
          </div>
        )
      ) : (
        <>
          <HistoryTable items={items} />
          <div className="flex items-center justify-between gap-3 text-sm text-slate-600">
            <span role="status">
              Showing {items.length} {items.length === 1 ? "request" : "requests"}
            </span>
            {history.hasNextPage && (
              <Button
                variant="secondary"
                disabled={history.isFetchingNextPage}
                onClick={() => void history.fetchNextPage()}
              >
                {history.isFetchingNextPage ? "Loading…" : "Load more"}
              </Button>
            )}
          </div>
        </>
      )}
    </section>
  );
}
