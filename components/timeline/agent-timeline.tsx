"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { queryKeys } from "@/components/realtime/query-keys";
import { GateLabel, StatusBadge } from "@/components/team/agent-badges";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { formatAge, useNow } from "@/components/ui/use-now";
import { VisibleText } from "@/components/ui/visible-text";
import type { AgentDetail } from "@/lib/agents/views";
import type { TimelinePage } from "@/lib/agents/timeline";
import { apiFetch, ApiRequestError } from "@/lib/shared/http/api-fetch";
import { TimelineEntry } from "./timeline-entry";

const PAGE_SIZE = 50;

function AgentSummary({ agent }: { agent: AgentDetail }) {
  const now = useNow();
  const heartbeat = agent.lastHeartbeatAt
    ? `${formatAge(now - Date.parse(agent.lastHeartbeatAt))} ago`
    : "never";
  return (
    <div className="rounded-xl bg-white p-4 shadow-sm ring-1 ring-slate-200 sm:p-5">
      <div className="flex flex-wrap items-start gap-3">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight wrap-anywhere">{agent.name}</h1>
          <p className="text-sm text-slate-600">
            <VisibleText text={agent.role} maxCharacters={200} />
          </p>
        </div>
        <StatusBadge name={agent.name} status={agent.status} />
      </div>
      <dl className="mt-4 grid grid-cols-2 gap-x-6 gap-y-3 text-sm sm:grid-cols-4">
        <div>
          <dt className="text-xs text-slate-500">Gate</dt>
          <dd className="mt-0.5">
            <GateLabel gate={agent.gate} />
          </dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500">Incarnation</dt>
          <dd className="mt-0.5">#{agent.incarnation}</dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500">Heartbeat</dt>
          <dd className="mt-0.5" suppressHydrationWarning>
            {heartbeat}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500">Pending requests</dt>
          <dd className="mt-0.5">{agent.pendingRequests.length}</dd>
        </div>
      </dl>
    </div>
  );
}

function AgentNotShown({ name, error }: { name: string; error: Error }) {
  const isMissing = error instanceof ApiRequestError && error.code === "AGENT_NOT_FOUND";
  return (
    <div className="space-y-2">
      <h1 className="text-xl font-semibold tracking-tight wrap-anywhere">
        {isMissing ? "No such agent" : name}
      </h1>
      <ErrorAlert
        message={
          isMissing ? `No agent is named ${name}.` : `Could not load ${name}: ${error.message}`
        }
      />
    </div>
  );
}

/** One agent's record: what it said and was told, what it tried, what it asked, how it changed. */
export function AgentTimeline({ name }: { name: string }) {
  // Fetched by the page, not rendered by the server: the server would render it for the cookie
  // alone, which another port of this host receives too (decision 080).
  const agent = useQuery({
    queryKey: queryKeys.agent(name),
    queryFn: () => apiFetch<AgentDetail>(`/agents/${name}`),
  });
  const timeline = useInfiniteQuery({
    queryKey: queryKeys.timeline(name),
    queryFn: ({ pageParam }) =>
      apiFetch<TimelinePage>(
        `/agents/${name}/timeline?limit=${PAGE_SIZE}${pageParam ? `&before=${encodeURIComponent(pageParam)}` : ""}`,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.nextCursor,
  });
  const items = timeline.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <div className="space-y-5">
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link
          href="/team"
          className="rounded text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          ← Team
        </Link>
      </nav>
      {agent.data ? (
        <AgentSummary agent={agent.data} />
      ) : agent.error ? (
        <AgentNotShown name={name} error={agent.error} />
      ) : (
        <p role="status" className="text-sm text-slate-600">
          Loading {name}…
        </p>
      )}

      <section aria-labelledby="timeline-heading" className="space-y-3">
        <h2 id="timeline-heading" className="text-lg font-semibold tracking-tight">
          Timeline
        </h2>
        <ErrorAlert
          message={timeline.error ? `Could not load the timeline: ${timeline.error.message}` : null}
        />
        {timeline.isPending ? (
          <p role="status" className="text-sm text-slate-600">
            Loading timeline…
          </p>
        ) : items.length === 0 ? (
          timeline.error ? null : (
            <p className="text-sm text-slate-600">Nothing has happened yet.</p>
          )
        ) : (
          <div className="rounded-xl bg-white p-4 shadow-sm ring-1 ring-slate-200 sm:p-5">
            <ol
              aria-label={`Timeline of ${name}, newest first`}
              className="ml-1 border-l border-slate-200"
            >
              {items.map((item) => (
                <TimelineEntry key={item.key} item={item} />
              ))}
            </ol>
            {timeline.hasNextPage && (
              <div className="mt-4 flex justify-center">
                <Button
                  variant="secondary"
                  disabled={timeline.isFetchingNextPage}
                  onClick={() => void timeline.fetchNextPage()}
                >
                  {timeline.isFetchingNextPage ? "Loading…" : "Load older"}
                </Button>
              </div>
            )}
          </div>
        )}
      </section>
    </div>
  );
}
