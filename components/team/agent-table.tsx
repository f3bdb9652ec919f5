"use client";

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import Link from "next/link";
import { memo, useEffect, useRef, useState } from "react";
import { describeRequestType } from "@/components/history/request-text";
import { formatAge, formatClock } from "@/components/ui/use-now";
import { VisibleText } from "@/components/ui/visible-text";
import { blockedSince, type BoardMember } from "@/lib/shared/agents/board";
import { isAgentActive } from "@/lib/shared/agents/schema";
import { GateLabel, StatusBadge } from "./agent-badges";
import { isOrphaned, STALE_HEARTBEAT_MS, type AgentAction } from "./agent-card";
import { useOffsetTop } from "./use-offset-top";
import { useIsHydrated } from "@/components/ui/use-is-hydrated";

/** A row's height, as its class `h-12` gives it. */
const ROW_HEIGHT = 48;

export type RowHandlers = {
  onAction: (action: AgentAction, member: BoardMember) => void;
  onSelect: (name: string, isSelected: boolean) => void;
};

/** The actions a card shows as buttons, behind one button per row. */
function RowActions({
  member,
  onAction,
}: {
  member: BoardMember;
  onAction: RowHandlers["onAction"];
}) {
  const [isOpen, setIsOpen] = useState(false);
  const menuRef = useRef<HTMLDivElement>(null);
  const isActive = isAgentActive(member.status);
  const hasShutdownRequest = member.pendingRequests.some(
    (request) => request.type === "shutdown" && request.sender === "lead",
  );

  useEffect(() => {
    if (!isOpen) return;
    const onPointer = (event: MouseEvent) => {
      if (!(event.target instanceof Node && menuRef.current?.contains(event.target))) {
        setIsOpen(false);
      }
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") setIsOpen(false);
    };
    document.addEventListener("mousedown", onPointer);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onPointer);
      document.removeEventListener("keydown", onKey);
    };
  }, [isOpen]);

  const items: { action: AgentAction; label: string; isDisabled?: boolean }[] = isActive
    ? [
        { action: "message", label: `Message ${member.name}` },
        { action: "require_plan", label: `Require plan from ${member.name}` },
        hasShutdownRequest
          ? { action: "shutdown", label: `Shutdown requested for ${member.name}`, isDisabled: true }
          : { action: "shutdown", label: `Request shutdown of ${member.name}` },
        { action: "force_stop", label: `Force stop ${member.name}` },
      ]
    : [{ action: "respawn", label: `Respawn ${member.name}` }];

  return (
    <div ref={menuRef} className="relative">
      <button
        type="button"
        aria-label={`Actions for ${member.name}`}
        aria-expanded={isOpen}
        onClick={() => setIsOpen((open) => !open)}
        className="rounded px-2 py-1 text-slate-700 ring-1 ring-slate-300 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600"
      >
        ⋯
      </button>
      {isOpen && (
        <ul
          aria-label={`Actions for ${member.name}`}
          className="absolute right-0 z-20 mt-1 w-60 rounded-md bg-white py-1 text-left shadow-lg ring-1 ring-slate-200"
        >
          {items.map((item) => (
            <li key={item.action}>
              <button
                type="button"
                disabled={item.isDisabled}
                onClick={() => {
                  setIsOpen(false);
                  onAction(item.action, member);
                }}
                className={`block w-full px-3 py-1.5 text-left text-sm hover:bg-slate-50 disabled:text-slate-600 ${item.action === "force_stop" ? "text-rose-700" : "text-slate-900"}`}
              >
                {item.label}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function PendingCell({ member, now }: { member: BoardMember; now: number }) {
  const [first, ...rest] = member.pendingRequests;
  if (!first) return <span className="text-slate-600">none</span>;
  const remaining = Date.parse(first.expiresAt) - now;
  return (
    <span className="flex min-w-0 items-center gap-1.5">
      {isOrphaned(member) && (
        <span
          className="rounded bg-rose-100 px-1 text-xs font-semibold text-rose-800"
          title="The agent is not running: nothing will act on the answer until it is respawned."
        >
          orphaned
        </span>
      )}
      <span className="truncate font-medium text-slate-900">
        {describeRequestType(first.type)}{" "}
        {first.sender === "lead" ? "requested by you" : "awaiting you"}
      </span>
      <span
        className={`shrink-0 text-xs tabular-nums ${remaining < 60_000 ? "font-semibold text-rose-700" : "text-slate-600"}`}
        suppressHydrationWarning
      >
        {`${first.timeoutPolicy ?? "expires"} in ${formatClock(remaining)}`}
      </span>
      {rest.length > 0 && <span className="shrink-0 text-xs text-slate-600">+{rest.length}</span>}
    </span>
  );
}

const AgentRow = memo(function AgentRow({
  member,
  index,
  now,
  canAct,
  isSelected,
  isActiveRow,
  handlers,
}: {
  member: BoardMember;
  index: number;
  now: number;
  canAct: boolean;
  isSelected: boolean;
  isActiveRow: boolean;
  handlers: RowHandlers;
}) {
  const since = blockedSince(member);
  const heartbeatAge = member.lastHeartbeatAt ? now - Date.parse(member.lastHeartbeatAt) : null;
  // A connected session is silent between tool calls by design; only workers heartbeat.
  const isHeartbeatStale =
    member.connector === null &&
    isAgentActive(member.status) &&
    heartbeatAge !== null &&
    heartbeatAge > STALE_HEARTBEAT_MS;
  const cell = "truncate px-2 py-2";
  return (
    <tr
      data-agent={member.name}
      data-index={index}
      aria-rowindex={index + 2}
      className={`h-12 border-t border-slate-100 ${isActiveRow ? "bg-indigo-50" : isSelected ? "bg-sky-50" : "bg-white"}`}
    >
      {canAct && (
        <td className="px-2">
          <input
            type="checkbox"
            aria-label={`Select ${member.name}`}
            checked={isSelected}
            onChange={(event) => handlers.onSelect(member.name, event.target.checked)}
            className="h-4 w-4 rounded border-slate-300"
          />
        </td>
      )}
      <th scope="row" className={`${cell} text-left font-semibold`}>
        <Link
          href={`/agents/${member.name}`}
          data-row-link={member.name}
          className="rounded text-slate-900 hover:text-indigo-700 hover:underline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600"
        >
          {member.name}
        </Link>
      </th>
      <td className={`${cell} text-slate-700`}>
        <VisibleText text={member.role} maxCharacters={40} />
      </td>
      <td className={cell}>
        <StatusBadge name={member.name} status={member.status} />
      </td>
      <td className={cell}>
        <GateLabel gate={member.gate} />
      </td>
      <td className={`${cell} text-slate-700`}>
        {member.taskTitle !== null ? (
          <VisibleText text={member.taskTitle} maxCharacters={40} />
        ) : (
          <span className="text-slate-600">none</span>
        )}
      </td>
      <td className={`${cell} tabular-nums`}>#{member.incarnation}</td>
      <td
        className={`${cell} tabular-nums ${isHeartbeatStale ? "font-medium text-amber-700" : ""}`}
        suppressHydrationWarning
      >
        {heartbeatAge === null ? "never" : `${formatAge(heartbeatAge)} ago`}
      </td>
      <td
        className={`${cell} tabular-nums ${since ? "font-medium text-amber-700" : "text-slate-600"}`}
        suppressHydrationWarning
      >
        {since ? formatClock(now - Date.parse(since)) : "no"}
      </td>
      <td
        className={`${cell} tabular-nums ${member.blockedToolCalls > 0 ? "font-medium text-rose-700" : ""}`}
      >
        {member.blockedToolCalls}
      </td>
      <td className="max-w-0 px-2 py-2" data-testid="row-pending">
        <PendingCell member={member} now={now} />
      </td>
      {canAct && (
        <td className="px-2 text-right">
          <RowActions member={member} onAction={handlers.onAction} />
        </td>
      )}
    </tr>
  );
});

/** The dense view: one row per agent, only the rows on screen in the DOM. */
export function AgentTable({
  rows,
  now,
  canAct,
  selected,
  activeIndex,
  handlers,
  onSelectAll,
}: {
  rows: BoardMember[];
  now: number;
  canAct: boolean;
  selected: ReadonlySet<string>;
  activeIndex: number | null;
  handlers: RowHandlers;
  onSelectAll: (isSelected: boolean) => void;
}) {
  const bodyRef = useRef<HTMLTableSectionElement>(null);
  const scrollMargin = useOffsetTop(bodyRef);
  const isHydrated = useIsHydrated();
  const virtualizer = useWindowVirtualizer({
    count: rows.length,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    scrollMargin,
    initialRect: { width: 1280, height: 900 },
  });

  useEffect(() => {
    if (activeIndex === null) return;
    virtualizer.scrollToIndex(activeIndex, { align: "auto" });
    const name = rows[activeIndex]?.name;
    const frame = requestAnimationFrame(() =>
      document.querySelector<HTMLElement>(`[data-row-link="${name}"]`)?.focus(),
    );
    return () => cancelAnimationFrame(frame);
  }, [activeIndex, rows, virtualizer]);

  const items = virtualizer.getVirtualItems();
  const paddingTop = items.length > 0 ? (items[0]?.start ?? 0) - scrollMargin : 0;
  const paddingBottom =
    items.length > 0 ? virtualizer.getTotalSize() - ((items.at(-1)?.end ?? 0) - scrollMargin) : 0;
  const columns = canAct ? 12 : 10;
  const isAllSelected = rows.length > 0 && rows.every((member) => selected.has(member.name));
  const head = "px-2 py-2 text-left text-xs font-semibold text-slate-600";

  // The table scrolls sideways inside its wrapper, not the page: its fixed columns alone are wider
  // than a phone.
  return (
    <div className="relative overflow-x-auto rounded-xl bg-white shadow-sm ring-1 ring-slate-200">
      <table
        aria-label="Agents"
        aria-rowcount={rows.length + 1}
        className="w-full min-w-[68rem] table-fixed text-sm"
      >
        <thead className="bg-slate-50">
          <tr aria-rowindex={1}>
            {canAct && (
              <th scope="col" className="w-8 px-2">
                <input
                  type="checkbox"
                  aria-label="Select all shown"
                  checked={isAllSelected}
                  onChange={(event) => onSelectAll(event.target.checked)}
                  className="h-4 w-4 rounded border-slate-300"
                />
              </th>
            )}
            <th scope="col" className={`${head} w-28`}>
              Name
            </th>
            <th scope="col" className={`${head} w-24`}>
              Role
            </th>
            <th scope="col" className={`${head} w-32`}>
              Status
            </th>
            <th scope="col" className={`${head} w-28`}>
              Gate
            </th>
            <th scope="col" className={`${head} w-28`}>
              Task
            </th>
            <th scope="col" className={`${head} w-12`}>
              <abbr title="Incarnation">Inc.</abbr>
            </th>
            <th scope="col" className={`${head} w-20`}>
              Heartbeat
            </th>
            <th scope="col" className={`${head} w-20`}>
              Blocked
            </th>
            <th scope="col" className={`${head} w-16`}>
              <abbr title="Blocked tool attempts">Tools ✕</abbr>
            </th>
            <th scope="col" className={head}>
              Pending request
            </th>
            {canAct && (
              <th scope="col" className={`${head} w-14`}>
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody ref={bodyRef}>
          {paddingTop > 0 && (
            <tr aria-hidden style={isHydrated ? { height: paddingTop } : undefined}>
              <td colSpan={columns} />
            </tr>
          )}
          {items.map((item) => {
            const member = rows[item.index];
            if (!member) return null;
            return (
              <AgentRow
                key={member.name}
                member={member}
                index={item.index}
                now={now}
                canAct={canAct}
                isSelected={selected.has(member.name)}
                isActiveRow={item.index === activeIndex}
                handlers={handlers}
              />
            );
          })}
          {paddingBottom > 0 && (
            <tr aria-hidden style={isHydrated ? { height: paddingBottom } : undefined}>
              <td colSpan={columns} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
