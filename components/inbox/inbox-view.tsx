"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import { useCanAct } from "@/components/session/session-context";
import { useNow } from "@/components/ui/use-now";
import { BulkBar } from "./bulk-bar";
import { NotificationsToggle } from "./notifications-toggle";
import { RequestDetail } from "./request-detail";
import { RequestList } from "./request-list";
import { ShortcutsDialog } from "./shortcuts-dialog";
import { readQuestion } from "./question-card";
import { useBulkSelection } from "./use-bulk-selection";
import { useInbox } from "./use-inbox";

export function isTypingTarget(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
  );
}

export function InboxView() {
  const inbox = useInbox();
  const canAct = useCanAct();
  const now = useNow();
  const [filter, setFilter] = useState("");
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [isRejecting, setIsRejecting] = useState(false);
  const [isHelpOpen, setIsHelpOpen] = useState(false);
  const [isEditing, setIsEditing] = useState(false);
  const feedbackRef = useRef<HTMLTextAreaElement>(null);
  const filterRef = useRef<HTMLInputElement>(null);

  const visible = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    if (!needle) return inbox.items;
    return inbox.items.filter((request) =>
      [request.agent, request.type, JSON.stringify(request.payload)].some((text) =>
        text.toLowerCase().includes(needle),
      ),
    );
  }, [inbox.items, filter]);
  // The request the Lead opened stays theirs: one that leaves the inbox (decided, replaced or
  // withdrawn while the list was being fetched) is never swapped for another under the same
  // buttons and keys (red team: a plan replaced during a refetch showed its replacement, and `a`
  // approved it). Only a filter the Lead typed shows another in its place.
  const isSelectionGone =
    selectedId !== null && !inbox.items.some((request) => request.id === selectedId);
  const selected = isSelectionGone
    ? null
    : (visible.find((request) => request.id === selectedId) ?? visible[0] ?? null);
  const bulk = useBulkSelection(visible);

  // The first request, shown until the Lead picks one, is pinned like one they picked (state
  // adjusted while rendering, as React has it for a value derived from the last render).
  if (selectedId === null && selected) setSelectedId(selected.id);

  function select(id: string | null) {
    setSelectedId(id);
    setIsRejecting(false);
  }

  useEffect(() => {
    document.title =
      inbox.pendingCount > 0 ? `(${inbox.pendingCount}) Inbox · Handshake` : "Inbox · Handshake";
  }, [inbox.pendingCount]);

  function move(step: number) {
    if (visible.length === 0) return;
    const index = selected ? visible.indexOf(selected) : -1;
    const next = visible[Math.min(visible.length - 1, Math.max(0, index + step))];
    if (next) select(next.id);
  }

  function decide(approve: boolean, feedback: string, fields?: Record<string, unknown>) {
    if (!selected || selected.status !== "pending") return;
    inbox.decide.mutate({
      id: selected.id,
      approve,
      ...(feedback ? { feedback } : {}),
      ...(fields ? { fields } : {}),
    });
    setIsRejecting(false);
  }

  /** Keys 1–9 answer the selected question with that option. */
  function answerWithOption(key: string): boolean {
    if (!canAct || selected?.type !== "question" || selected.status !== "pending") return false;
    const option = readQuestion(selected).options?.[Number(key) - 1];
    if (!option) return false;
    decide(true, feedbackRef.current?.value.trim() ?? "", { answer: { option: option.id } });
    return true;
  }

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.ctrlKey || event.metaKey || event.altKey || isHelpOpen) return;
      if (isTypingTarget(event.target)) return;
      const actions: Record<string, () => void> = {
        j: () => move(1),
        k: () => move(-1),
        "/": () => filterRef.current?.focus(),
        "?": () => setIsHelpOpen(true),
        x: () => canAct && selected && bulk.toggle(selected.id),
        // A question is answered with an option or a text, never a bare approval; with an edit
        // open, only "Approve edited" approves, never the call as asked.
        a: () =>
          canAct &&
          !isEditing &&
          selected?.type !== "question" &&
          decide(true, feedbackRef.current?.value.trim() ?? ""),
        r: () => {
          if (!canAct || selected?.status !== "pending") return;
          setIsRejecting(true);
          feedbackRef.current?.focus();
        },
      };
      if (/^[1-9]$/.test(event.key) && answerWithOption(event.key)) {
        event.preventDefault();
        return;
      }
      const action = actions[event.key];
      if (action) {
        event.preventDefault();
        action();
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  const decideError =
    inbox.decide.error &&
    inbox.decide.variables?.id === selected?.id &&
    !inbox.conflicts.has(selected?.id ?? "")
      ? inbox.decide.error.message
      : null;

  return (
    <section aria-labelledby="inbox-heading" className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 id="inbox-heading" className="text-2xl font-semibold tracking-tight">
          Approval inbox
        </h1>
        <span
          className="rounded-full bg-indigo-100 px-2 py-0.5 text-sm font-medium text-indigo-800"
          aria-label={`${inbox.pendingCount} pending`}
        >
          {inbox.pendingCount}
        </span>
        <div className="ml-auto flex flex-wrap items-center gap-2">
          <label htmlFor="inbox-filter" className="sr-only">
            Filter requests
          </label>
          <input
            id="inbox-filter"
            ref={filterRef}
            type="search"
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            onKeyDown={(event) => event.key === "Escape" && event.currentTarget.blur()}
            placeholder="Filter (press /)"
            className="w-48 rounded-md border-0 px-3 py-1.5 text-sm shadow-sm ring-1 ring-slate-300 ring-inset focus:ring-2 focus:ring-indigo-600"
          />
          <NotificationsToggle />
          <button
            type="button"
            onClick={() => setIsHelpOpen(true)}
            className="rounded-md px-2 py-1 text-sm text-slate-600 hover:bg-slate-100"
            aria-label="Keyboard shortcuts"
          >
            ?
          </button>
        </div>
      </div>

      {inbox.loadError && (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700">
          Could not load requests: {inbox.loadError.message}
        </p>
      )}
      {!inbox.isLoading && inbox.items.length === 0 ? (
        <div className="rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
          <p className="text-base font-medium">No requests are waiting for you.</p>
          <p className="mt-1 text-sm text-slate-600">
            When an agent asks to approve a plan, run a risky tool or stop, or asks you a question,
            it appears here. Spawn a teammate from the Team page to get started.
          </p>
        </div>
      ) : (
        <div className="grid gap-4 lg:grid-cols-[minmax(0,1fr)_minmax(0,2fr)]">
          <div className="min-w-0 space-y-2">
            {canAct && (
              <BulkBar
                items={inbox.items}
                decidableCount={bulk.decidable.length}
                checkedIds={bulk.checkedIds}
                focusedAgent={selected?.agent ?? null}
                onSelectAgent={bulk.selectAgent}
                onDecided={bulk.clear}
                remember={inbox.remember}
              />
            )}
            {visible.length === 0 ? (
              <p role="status" className="rounded-md bg-white px-3 py-4 text-sm text-slate-600">
                No request matches “{filter.trim()}”.
              </p>
            ) : (
              <RequestList
                items={visible}
                selectedId={selected?.id ?? null}
                now={now}
                onSelect={select}
                checkedIds={bulk.checkedSet}
                onCheck={canAct ? bulk.toggle : undefined}
              />
            )}
            {inbox.items.some((request) => request.status !== "pending") && (
              <button
                type="button"
                onClick={() => {
                  inbox.dismissResolved();
                  if (selected?.status !== "pending") select(null);
                }}
                className="text-xs text-slate-600 underline"
              >
                Clear decided requests
              </button>
            )}
          </div>
          {isSelectionGone && (
            <p role="status" className="rounded-xl bg-white p-6 text-sm text-slate-700 shadow-sm">
              The request you had open is no longer in the inbox: it was decided, replaced or
              withdrawn elsewhere. Choose another from the list.
            </p>
          )}
          {selected && (
            <RequestDetail
              key={selected.id}
              ref={feedbackRef}
              request={selected}
              now={now}
              canAct={canAct}
              isDeciding={inbox.decide.isPending}
              isConflict={inbox.conflicts.has(selected.id)}
              isRejecting={isRejecting}
              decideError={decideError}
              onEditingChange={setIsEditing}
              onDecide={decide}
            />
          )}
        </div>
      )}
      {isHelpOpen && <ShortcutsDialog onClose={() => setIsHelpOpen(false)} />}
    </section>
  );
}
