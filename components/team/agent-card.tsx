"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { memo, useId, type ReactNode } from "react";
import { queryKeys } from "@/components/realtime/query-keys";
import { describeRequestType, RequestSummary } from "@/components/history/request-text";
import { Button } from "@/components/ui/button";
import { formatAge, formatClock } from "@/components/ui/use-now";
import { VisibleText } from "@/components/ui/visible-text";
import type { BoardMember, BoardRequest } from "@/lib/shared/agents/board";
import { isAgentActive } from "@/lib/shared/agents/schema";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { RequestView } from "@/lib/requests/views";
import { GateLabel, StatusBadge, ToolHostLabel } from "./agent-badges";

export type AgentAction = "message" | "require_plan" | "shutdown" | "force_stop" | "respawn";

/** Heartbeats come every few seconds; past this the agent is about to be marked offline. */
export const STALE_HEARTBEAT_MS = 15_000;

/** Its requests stay pending, but no live process will act on the answer. */
export function isOrphaned(member: Pick<BoardMember, "status">): boolean {
  return member.status === "offline" || member.status === "crashed";
}

function Fact({ term, wide, children }: { term: string; wide?: boolean; children: ReactNode }) {
  return (
    <div className={wide ? "col-span-2" : undefined}>
      <dt className="text-xs text-slate-500">{term}</dt>
      <dd className="mt-0.5 truncate text-slate-900">{children}</dd>
    </div>
  );
}

/**
 * The request's summary needs its payload, which a row patched from an event lacks (events never
 * carry one): such a row fetches the request by its id, with the console's own credentials.
 */
function RequestSummaryOf({ request }: { request: BoardRequest }) {
  const hasPayload = request.payload !== undefined;
  const fetched = useQuery({
    queryKey: queryKeys.request(request.id),
    queryFn: () => apiFetch<RequestView>(`/requests/${request.id}`),
    enabled: !hasPayload,
  });
  const full = hasPayload ? (request as RequestView) : fetched.data;
  return full ? <RequestSummary request={full} className="mt-0.5 text-xs text-slate-600" /> : null;
}

function PendingRequestItem({
  request,
  now,
  isOrphaned,
}: {
  request: BoardRequest;
  now: number;
  isOrphaned: boolean;
}) {
  const remaining = Date.parse(request.expiresAt) - now;
  const isFromLead = request.sender === "lead";
  return (
    <li className="min-w-0 rounded-lg bg-amber-50/60 px-3 py-2 ring-1 ring-amber-200/70">
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1 text-sm">
        <span className="font-medium text-slate-900">
          {isFromLead
            ? `${describeRequestType(request.type)} requested by you`
            : `${describeRequestType(request.type)} awaiting you`}
        </span>
        {isOrphaned && (
          <span
            className="rounded bg-rose-100 px-1.5 py-0.5 text-xs font-semibold text-rose-800"
            title="The agent is not running: nothing will act on the answer until it is respawned."
          >
            orphaned
          </span>
        )}
        <span
          className={`ml-auto text-xs tabular-nums ${remaining < 60_000 ? "font-semibold text-rose-700" : "text-slate-600"}`}
          suppressHydrationWarning
        >
          {`${request.timeoutPolicy ?? "expires"} in ${formatClock(remaining)}`}
        </span>
      </div>
      <RequestSummaryOf request={request} />
    </li>
  );
}

export const AgentCard = memo(function AgentCard({
  member,
  now,
  canAct,
  onAction,
}: {
  member: BoardMember;
  now: number;
  canAct: boolean;
  onAction: (action: AgentAction, member: BoardMember) => void;
}) {
  const headingId = useId();
  const isActive = isAgentActive(member.status);
  const blockingSince = member.pendingRequests.find((request) => request.target === "lead");
  const hasShutdownRequest = member.pendingRequests.some(
    (request) => request.type === "shutdown" && request.sender === "lead",
  );
  const heartbeatAge = member.lastHeartbeatAt ? now - Date.parse(member.lastHeartbeatAt) : null;
  // A connected session is silent between tool calls; only workers heartbeat every few seconds.
  const isHeartbeatStale =
    isActive &&
    member.connector === null &&
    heartbeatAge !== null &&
    heartbeatAge > STALE_HEARTBEAT_MS;

  return (
    <article
      aria-labelledby={headingId}
      data-agent={member.name}
      className={`flex flex-col rounded-xl p-4 shadow-sm ring-1 ring-slate-200 ${isActive ? "bg-white" : "bg-slate-50"}`}
    >
      <header className="flex items-start justify-between gap-3">
        <div className="min-w-0">
          <h2 id={headingId} className="text-base font-semibold wrap-anywhere">
            <Link
              href={`/agents/${member.name}`}
              className="rounded text-slate-900 hover:text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
            >
              {member.name}
            </Link>
          </h2>
          <p className="text-sm text-slate-600">
            <VisibleText text={member.role} maxCharacters={120} />
          </p>
        </div>
        <StatusBadge name={member.name} status={member.status} />
      </header>

      <dl className="mt-4 grid grid-cols-2 gap-x-4 gap-y-3 text-sm">
        <Fact term="Gate">
          <GateLabel gate={member.gate} />
        </Fact>
        <Fact term="Incarnation">#{member.incarnation}</Fact>
        <Fact term="Tools" wide>
          <ToolHostLabel toolHost={member.toolHost} />
        </Fact>
        {member.connector !== null && (
          <Fact term="Session" wide>
            <span data-testid="agent-connector">
              <VisibleText text={member.connector.cwd} maxCharacters={160} />
              {member.connector.model !== null && (
                <span className="text-slate-600">
                  {" · "}
                  <VisibleText text={member.connector.model} maxCharacters={60} />
                </span>
              )}
            </span>
          </Fact>
        )}
        <Fact term="Task" wide>
          {member.taskTitle !== null ? (
            <VisibleText text={member.taskTitle} maxCharacters={160} />
          ) : (
            <span className="text-slate-500">No task claimed</span>
          )}
        </Fact>
        <Fact term="Heartbeat">
          <span
            className={isHeartbeatStale ? "font-medium text-amber-700" : undefined}
            suppressHydrationWarning
          >
            {heartbeatAge === null ? "never" : `${formatAge(heartbeatAge)} ago`}
          </span>
        </Fact>
        <Fact term="Blocked on Lead">
          <span
            className={blockingSince ? "font-medium text-amber-700 tabular-nums" : "text-slate-500"}
            suppressHydrationWarning
          >
            {blockingSince ? formatClock(now - Date.parse(blockingSince.createdAt)) : "not blocked"}
          </span>
        </Fact>
        <Fact term="Blocked tool attempts" wide>
          <span className={member.blockedToolCalls > 0 ? "font-medium text-rose-700" : undefined}>
            {member.blockedToolCalls}
          </span>
        </Fact>
      </dl>

      {member.pendingRequests.length > 0 && (
        <section className="mt-4">
          <h3 className="sr-only">Pending requests of {member.name}</h3>
          <ul aria-label="Pending requests" className="space-y-2">
            {member.pendingRequests.map((request) => (
              <PendingRequestItem
                key={request.id}
                request={request}
                now={now}
                isOrphaned={isOrphaned(member)}
              />
            ))}
          </ul>
        </section>
      )}

      <div className="grow" />
      {canAct && (
        <div className="mt-4 flex flex-wrap gap-2 border-t border-slate-100 pt-3">
          {isActive ? (
            <>
              <Button
                variant="secondary"
                aria-label={`Message ${member.name}`}
                onClick={() => onAction("message", member)}
              >
                Message
              </Button>
              <Button
                variant="secondary"
                aria-label={`Require plan from ${member.name}`}
                onClick={() => onAction("require_plan", member)}
              >
                Require plan
              </Button>
              <Button
                variant="secondary"
                aria-label={
                  hasShutdownRequest
                    ? `Shutdown requested for ${member.name}`
                    : `Request shutdown of ${member.name}`
                }
                disabled={hasShutdownRequest}
                onClick={() => onAction("shutdown", member)}
              >
                {hasShutdownRequest ? "Shutdown requested" : "Request shutdown"}
              </Button>
              <Button
                variant="secondary"
                aria-label={`Force stop ${member.name}`}
                onClick={() => onAction("force_stop", member)}
              >
                <span className="text-rose-700">Force stop</span>
              </Button>
            </>
          ) : (
            <Button
              variant="secondary"
              aria-label={`Respawn ${member.name}`}
              onClick={() => onAction("respawn", member)}
            >
              Respawn
            </Button>
          )}
        </div>
      )}
    </article>
  );
});
