"use client";

import { useRouter } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import { isTypingTarget } from "@/components/inbox/inbox-view";
import { useCanAct } from "@/components/session/session-context";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { SelectField } from "@/components/ui/select-field";
import { TextField } from "@/components/ui/text-field";
import { useNow } from "@/components/ui/use-now";
import {
  BOARD_BUCKETS,
  BOARD_SORTS,
  BUCKET_LABELS,
  compareNatural,
  countBuckets,
  DEFAULT_BOARD_QUERY,
  RECENT_GONE_ON_BOARD,
  selectBoardRows,
  SORT_LABELS,
  type BoardBucket,
  type BoardMember,
  type BoardSort,
} from "@/lib/shared/agents/board";
import {
  gateStateSchema,
  isAgentActive,
  workerConfigSchema,
  type GateState,
} from "@/lib/shared/agents/schema";
import { toVisibleString } from "@/lib/shared/display/visible-text";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import type { WorkerScriptOption } from "@/lib/agents/worker-scripts";
import { ActionDialog, type ActionDialogProps } from "./action-dialog";
import { GATE_LABELS } from "./agent-badges";
import type { AgentAction } from "./agent-card";
import { AgentGrid } from "./agent-grid";
import { AgentTable, type RowHandlers } from "./agent-table";
import { SpawnTeammateDialog } from "./spawn-teammate-dialog";
import { useBoardQuery } from "./use-board-query";
import { useTeam, type GoneAgents } from "./use-team";

type BulkAction = "message" | "require_plan" | "shutdown";
type OpenDialog =
  | { kind: "spawn" }
  | { kind: "broadcast" }
  | { kind: "bulk"; action: BulkAction }
  | { kind: AgentAction; member: BoardMember };

function postTo(path: string, body: Record<string, unknown> = {}): Promise<unknown> {
  return apiFetch(path, { body });
}

function withReason(reason: string): Record<string, unknown> {
  return reason ? { reason } : {};
}

/** The confirmation each per-agent action asks for, and the API call it makes. */
function describeAction(
  kind: Exclude<AgentAction, "respawn">,
  member: BoardMember,
): Omit<ActionDialogProps, "onClose"> {
  const path = `/agents/${member.name}`;
  switch (kind) {
    case "message":
      return {
        title: `Message ${member.name}`,
        description: "It reads the message at its next step.",
        field: { label: "Message", isRequired: true },
        confirmLabel: "Send",
        pendingLabel: "Sending…",
        onConfirm: (content) => postTo("/messages", { to: member.name, content }),
      };
    case "require_plan":
      return {
        title: `Require a plan from ${member.name}`,
        description:
          "Its gate closes now: mutating tools stay blocked until you approve a plan. A plan already in review stays in review.",
        field: { label: "Reason", isRequired: false, hint: "Optional; sent to the agent." },
        confirmLabel: "Require plan",
        pendingLabel: "Requiring…",
        onConfirm: (reason) => postTo(`${path}/plan-requirement`, withReason(reason)),
      };
    case "shutdown":
      return {
        title: `Ask ${member.name} to shut down`,
        description:
          "It answers after its current step and may decline in the middle of multi-file work. If it does not answer in time it is force-stopped.",
        field: { label: "Reason", isRequired: false, hint: "Optional; the agent sees it." },
        confirmLabel: "Request shutdown",
        pendingLabel: "Requesting…",
        onConfirm: (reason) => postTo(`${path}/shutdown`, withReason(reason)),
      };
    case "force_stop":
      return {
        title: `Force stop ${member.name}?`,
        description:
          "This ends its incarnation now: the worker is killed and its pending requests are cancelled. Work in progress is not saved.",
        confirmLabel: "Force stop",
        pendingLabel: "Stopping…",
        variant: "danger",
        onConfirm: () => apiFetch(`${path}/force-stop`, { method: "POST" }),
      };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

/** How many of a bulk action's calls are in flight at once: the API's own routes, one per agent. */
const BULK_CONCURRENCY = 6;

/**
 * Calls `call` for every name and resolves with the names that failed. A failure does not stop the
 * others: each agent's action is independent.
 */
async function runForEach(
  names: readonly string[],
  call: (name: string) => Promise<unknown>,
): Promise<{ failed: string[]; firstError: string | null }> {
  const failed: string[] = [];
  let firstError: string | null = null;
  let next = 0;
  async function worker() {
    while (next < names.length) {
      const name = names[next++] as string;
      try {
        await call(name);
      } catch (error) {
        failed.push(name);
        firstError ??= `${name}: ${(error as Error).message}`;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(BULK_CONCURRENCY, names.length) }, worker));
  return { failed, firstError };
}

const BULK_ACTIONS: Record<
  BulkAction,
  {
    button: string;
    title: (count: number) => string;
    description: string;
    field: ActionDialogProps["field"];
    confirmLabel: string;
    pendingLabel: string;
    call: (name: string, text: string) => Promise<unknown>;
  }
> = {
  require_plan: {
    button: "Require plan",
    title: (count) => `Require a plan from ${count} ${count === 1 ? "agent" : "agents"}`,
    description:
      "Each one's gate closes now: mutating tools stay blocked until you approve its plan.",
    field: { label: "Reason", isRequired: false, hint: "Optional; sent to every agent." },
    confirmLabel: "Require plan",
    pendingLabel: "Requiring…",
    call: (name, reason) => postTo(`/agents/${name}/plan-requirement`, withReason(reason)),
  },
  message: {
    button: "Message",
    title: (count) => `Message ${count} ${count === 1 ? "agent" : "agents"}`,
    description: "Each one reads the message at its next step.",
    field: { label: "Message", isRequired: true },
    confirmLabel: "Send",
    pendingLabel: "Sending…",
    call: (name, content) => postTo("/messages", { to: name, content }),
  },
  shutdown: {
    button: "Request shutdown",
    title: (count) => `Ask ${count} ${count === 1 ? "agent" : "agents"} to shut down`,
    description:
      "Each answers after its current step and may decline; one that does not answer in time is force-stopped.",
    field: { label: "Reason", isRequired: false, hint: "Optional; the agents see it." },
    confirmLabel: "Request shutdown",
    pendingLabel: "Requesting…",
    call: (name, reason) => postTo(`/agents/${name}/shutdown`, withReason(reason)),
  },
};

export function TeamBoard({ scripts }: { scripts: WorkerScriptOption[] }) {
  const [goneShown, setGoneShown] = useState<GoneAgents>("recent");
  const team = useTeam(goneShown);
  const olderGone = team.data?.olderGone ?? 0;
  const canAct = useCanAct();
  const now = useNow();
  const router = useRouter();
  const [dialog, setDialog] = useState<OpenDialog | null>(null);
  const close = () => setDialog(null);

  const members = useMemo(() => team.data?.items ?? [], [team.data]);
  const { query, view, update, chooseView } = useBoardQuery(members.length);
  const [search, setSearch] = useState(query.search);
  const searchRef = useRef<HTMLInputElement>(null);
  const counts = useMemo(() => countBuckets(members), [members]);
  const rows = useMemo(
    () => selectBoardRows(members, { ...query, search }),
    [members, query, search],
  );
  const roles = useMemo(
    () => [...new Set(members.map((member) => member.role))].sort(compareNatural),
    [members],
  );

  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [activeIndex, setActiveIndex] = useState<number | null>(null);
  const handlers = useMemo<RowHandlers>(
    () => ({
      onAction: (kind, member) => setDialog({ kind, member }),
      onSelect: (name, isSelected) =>
        setSelected((previous) => {
          const next = new Set(previous);
          if (isSelected) next.add(name);
          else next.delete(name);
          return next;
        }),
    }),
    [],
  );
  const selectedActive = members.filter(
    (member) => selected.has(member.name) && isAgentActive(member.status),
  );

  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.ctrlKey || event.metaKey || event.altKey || dialog) return;
      if (isTypingTarget(event.target)) return;
      if (event.key === "/") {
        event.preventDefault();
        searchRef.current?.focus();
      } else if (event.key === "j" || event.key === "k") {
        event.preventDefault();
        if (rows.length === 0) return;
        const step = event.key === "j" ? 1 : -1;
        setActiveIndex((index) =>
          Math.min(rows.length - 1, Math.max(0, index === null ? 0 : index + step)),
        );
      } else if (event.key === "Enter" && activeIndex !== null) {
        // On a focused link or button Enter already does what it says.
        if (event.target instanceof HTMLElement && event.target.closest("a, button")) return;
        const member = rows[activeIndex];
        if (member) router.push(`/agents/${member.name}`);
      }
    }
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });

  const isFiltered =
    search !== "" || query.bucket !== null || query.gate !== null || query.role !== null;

  function changeSearch(text: string) {
    setSearch(text);
    setActiveIndex(null);
    update({ search: text });
  }

  function chooseBucket(bucket: BoardBucket | null) {
    setActiveIndex(null);
    update({ bucket });
  }

  return (
    <section aria-labelledby="team-heading" className="space-y-4">
      <div className="flex flex-wrap items-end gap-3">
        <div>
          <h1 id="team-heading" className="text-2xl font-semibold tracking-tight">
            Team
          </h1>
          <p className="mt-1 text-sm text-slate-600" data-testid="team-summary">
            {counts.total} {counts.total === 1 ? "agent" : "agents"} ·{" "}
            <span title="Heard from: a heartbeat in this incarnation, neither offline nor ended">
              {counts.active} active
            </span>{" "}
            · {counts.waiting_on_you} waiting on you
          </p>
        </div>
        {canAct && (
          <div className="ml-auto flex flex-wrap gap-2">
            <Button
              variant="secondary"
              disabled={counts.total === counts.ended}
              onClick={() => setDialog({ kind: "broadcast" })}
            >
              Broadcast
            </Button>
            <Button onClick={() => setDialog({ kind: "spawn" })}>Spawn teammate</Button>
          </div>
        )}
      </div>

      {members.length > 0 && (
        <div role="group" aria-label="Filter by status" className="flex flex-wrap gap-2">
          {BOARD_BUCKETS.map((bucket) => {
            const isChosen = query.bucket === bucket;
            return (
              <button
                key={bucket}
                type="button"
                aria-pressed={isChosen}
                onClick={() => chooseBucket(isChosen ? null : bucket)}
                className={`inline-flex items-center gap-1.5 rounded-full px-3 py-1 text-sm ring-1 ring-inset focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-600 ${isChosen ? "bg-indigo-600 text-white ring-indigo-600" : "bg-white text-slate-800 ring-slate-300 hover:bg-slate-50"}`}
              >
                {BUCKET_LABELS[bucket]}{" "}
                <span className="font-semibold tabular-nums" data-testid={`bucket-${bucket}`}>
                  {counts[bucket]}
                </span>
              </button>
            );
          })}
        </div>
      )}

      {(olderGone > 0 || goneShown === "all") && (
        <p
          role="note"
          aria-label="Agents gone"
          className="flex flex-wrap items-center gap-2 text-sm text-slate-600"
        >
          {goneShown === "all" ? (
            <>
              Every agent is shown, however long ago it ended or went offline.
              <Button variant="secondary" onClick={() => setGoneShown("recent")}>
                Show only the latest gone
              </Button>
            </>
          ) : (
            <>
              Of the agents that ended, or have been offline for over an hour with nothing pending,
              the latest {RECENT_GONE_ON_BOARD} are shown; {olderGone.toLocaleString("en-US")}{" "}
              before them are not.
              <Button variant="secondary" onClick={() => setGoneShown("all")}>
                Show all agents
              </Button>
            </>
          )}
        </p>
      )}

      {members.length > 0 && (
        <div className="flex flex-wrap items-end gap-3">
          <TextField
            ref={searchRef}
            label="Search agents"
            type="search"
            value={search}
            placeholder="Name, role or task (press /)"
            onChange={(event) => changeSearch(event.target.value)}
            onKeyDown={(event) => event.key === "Escape" && event.currentTarget.blur()}
            className="w-64"
          />
          <SelectField
            label="Status"
            value={query.bucket ?? ""}
            onChange={(event) => chooseBucket((event.target.value || null) as BoardBucket | null)}
            className="w-40"
          >
            <option value="">Any status</option>
            {BOARD_BUCKETS.map((bucket) => (
              <option key={bucket} value={bucket}>
                {BUCKET_LABELS[bucket]}
              </option>
            ))}
          </SelectField>
          <SelectField
            label="Gate"
            value={query.gate ?? ""}
            onChange={(event) => update({ gate: (event.target.value || null) as GateState | null })}
            className="w-40"
          >
            <option value="">Any gate</option>
            {gateStateSchema.options.map((gate) => (
              <option key={gate} value={gate}>
                {GATE_LABELS[gate]}
              </option>
            ))}
          </SelectField>
          <SelectField
            label="Role"
            value={query.role ?? ""}
            onChange={(event) => update({ role: event.target.value || null })}
            className="w-40"
          >
            <option value="">Any role</option>
            {roles.map((role) => (
              <option key={role} value={role}>
                {/* An option takes no markup: a role's hidden characters show as escapes in text. */}
                {toVisibleString(role, { maxCharacters: 100 })}
              </option>
            ))}
          </SelectField>
          <SelectField
            label="Sort by"
            value={query.sort}
            onChange={(event) => update({ sort: event.target.value as BoardSort })}
            className="w-48"
          >
            {BOARD_SORTS.map((sort) => (
              <option key={sort} value={sort}>
                {SORT_LABELS[sort]}
              </option>
            ))}
          </SelectField>
          <div role="group" aria-label="View" className="ml-auto flex gap-1">
            {(["table", "cards"] as const).map((option) => (
              <Button
                key={option}
                variant={view === option ? "primary" : "secondary"}
                aria-pressed={view === option}
                onClick={() => chooseView(option)}
              >
                {option === "table" ? "Table" : "Cards"}
              </Button>
            ))}
          </div>
        </div>
      )}

      <ErrorAlert
        message={
          team.error
            ? `Could not ${team.data ? "refresh" : "load"} the team: ${team.error.message}`
            : null
        }
      />

      {canAct && selected.size > 0 && (
        <div
          role="region"
          aria-label="Bulk actions"
          className="flex flex-wrap items-center gap-2 rounded-lg bg-sky-50 px-3 py-2 ring-1 ring-sky-200"
        >
          <span className="text-sm font-medium text-slate-800">
            {selected.size} selected
            {selectedActive.length < selected.size &&
              ` (${selected.size - selectedActive.length} ended, left out)`}
          </span>
          {(Object.keys(BULK_ACTIONS) as BulkAction[]).map((action) => (
            <Button
              key={action}
              variant="secondary"
              aria-label={`${BULK_ACTIONS[action].button} for the selected agents`}
              disabled={selectedActive.length === 0}
              onClick={() => setDialog({ kind: "bulk", action })}
            >
              {BULK_ACTIONS[action].button}
            </Button>
          ))}
          <Button variant="ghost" onClick={() => setSelected(new Set())}>
            Clear selection
          </Button>
        </div>
      )}

      {team.data === undefined ? (
        team.error ? null : (
          <p role="status" className="text-sm text-slate-600">
            Loading the team…
          </p>
        )
      ) : members.length === 0 ? (
        <div className="rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
          <p className="text-base font-medium">No agents yet.</p>
          <p className="mt-1 text-sm text-slate-600">
            {canAct
              ? "Spawn a teammate to start one; it appears here as soon as it registers."
              : "Agents appear here as soon as the Lead spawns them."}
          </p>
        </div>
      ) : rows.length === 0 ? (
        <div className="rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
          <p className="text-base font-medium">No agent matches.</p>
          <Button
            variant="secondary"
            className="mt-3"
            onClick={() => {
              setSearch("");
              update({ ...DEFAULT_BOARD_QUERY, sort: query.sort, view: query.view });
            }}
          >
            Clear filters
          </Button>
        </div>
      ) : (
        <>
          <p className="text-xs text-slate-600" aria-live="polite">
            {isFiltered ? `${rows.length} of ${members.length} shown` : `${rows.length} shown`} ·
            j/k to move, enter to open
          </p>
          {view === "table" ? (
            <AgentTable
              rows={rows}
              now={now}
              canAct={canAct}
              selected={selected}
              activeIndex={activeIndex}
              handlers={handlers}
              onSelectAll={(isSelected) =>
                setSelected(isSelected ? new Set(rows.map((member) => member.name)) : new Set())
              }
            />
          ) : (
            <AgentGrid
              rows={rows}
              now={now}
              canAct={canAct}
              activeIndex={activeIndex}
              handlers={handlers}
            />
          )}
        </>
      )}

      {dialog?.kind === "spawn" && <SpawnTeammateDialog scripts={scripts} onClose={close} />}
      {dialog?.kind === "respawn" && (
        <SpawnTeammateDialog
          scripts={scripts}
          defaults={{
            name: dialog.member.name,
            role: dialog.member.role,
            prompt: dialog.member.prompt ?? "",
            requirePlan: dialog.member.requirePlan,
            worker: workerConfigSchema.safeParse(dialog.member.worker).data ?? null,
          }}
          onClose={close}
        />
      )}
      {dialog?.kind === "broadcast" && (
        <ActionDialog
          title="Broadcast to the team"
          description={`Every agent not ended (${members.length - counts.ended}) receives it at its next step.`}
          field={{ label: "Message", isRequired: true }}
          confirmLabel="Broadcast"
          pendingLabel="Sending…"
          onConfirm={(content) => postTo("/messages", { to: "*", content })}
          onClose={close}
        />
      )}
      {dialog?.kind === "bulk" && (
        <ActionDialog
          title={BULK_ACTIONS[dialog.action].title(selectedActive.length)}
          description={BULK_ACTIONS[dialog.action].description}
          field={BULK_ACTIONS[dialog.action].field}
          confirmLabel={BULK_ACTIONS[dialog.action].confirmLabel}
          pendingLabel={BULK_ACTIONS[dialog.action].pendingLabel}
          onConfirm={async (text) => {
            const { call } = BULK_ACTIONS[dialog.action];
            const names = selectedActive.map((member) => member.name);
            const { failed, firstError } = await runForEach(names, (name) => call(name, text));
            // What succeeded is done; what failed stays selected, to retry or inspect.
            setSelected(new Set(failed));
            if (firstError) {
              throw new Error(`${failed.length} of ${names.length} failed, e.g. ${firstError}`);
            }
          }}
          onClose={close}
        />
      )}
      {dialog && "member" in dialog && dialog.kind !== "respawn" && (
        <ActionDialog {...describeAction(dialog.kind, dialog.member)} onClose={close} />
      )}
    </section>
  );
}
