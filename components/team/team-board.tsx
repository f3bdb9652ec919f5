"use client";

import { useState } from "react";
import { useCanAct } from "@/components/session/session-context";
import { Button } from "@/components/ui/button";
import { ErrorAlert } from "@/components/ui/error-alert";
import { useNow } from "@/components/ui/use-now";
import type { TeamMember } from "@/lib/agents/views";
import { isAgentActive, workerConfigSchema } from "@/lib/shared/agents/schema";
import { apiFetch } from "@/lib/shared/http/api-fetch";
import { ActionDialog, type ActionDialogProps } from "./action-dialog";
import { AgentCard, type AgentAction } from "./agent-card";
import type { WorkerScriptOption } from "@/lib/agents/worker-scripts";
import { SpawnTeammateDialog } from "./spawn-teammate-dialog";
import { useTeam } from "./use-team";

type OpenDialog =
  { kind: "spawn" } | { kind: "broadcast" } | { kind: AgentAction; member: TeamMember };

function postTo(path: string, body: Record<string, unknown> = {}): Promise<unknown> {
  return apiFetch(path, { body });
}

function withReason(reason: string): Record<string, unknown> {
  return reason ? { reason } : {};
}

/** The confirmation each per-agent action asks for, and the API call it makes. */
function describeAction(
  kind: Exclude<AgentAction, "respawn">,
  member: TeamMember,
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

export function TeamBoard({
  initialMembers,
  scripts,
}: {
  initialMembers: TeamMember[];
  scripts: WorkerScriptOption[];
}) {
  const team = useTeam(initialMembers);
  const canAct = useCanAct();
  const now = useNow();
  const [dialog, setDialog] = useState<OpenDialog | null>(null);
  const close = () => setDialog(null);

  const members = team.data?.items ?? [];
  const activeCount = members.filter((member) => isAgentActive(member.status)).length;
  const waitingCount = members.filter((member) =>
    member.pendingRequests.some((request) => request.target === "lead"),
  ).length;

  return (
    <section aria-labelledby="team-heading" className="space-y-5">
      <div className="flex flex-wrap items-end gap-3">
        <div>
          <h1 id="team-heading" className="text-2xl font-semibold tracking-tight">
            Team
          </h1>
          <p className="mt-1 text-sm text-slate-600">
            {members.length} {members.length === 1 ? "agent" : "agents"} · {activeCount} active ·{" "}
            {waitingCount} waiting on you
          </p>
        </div>
        {canAct && (
          <div className="ml-auto flex flex-wrap gap-2">
            <Button
              variant="secondary"
              disabled={activeCount === 0}
              onClick={() => setDialog({ kind: "broadcast" })}
            >
              Broadcast
            </Button>
            <Button onClick={() => setDialog({ kind: "spawn" })}>Spawn teammate</Button>
          </div>
        )}
      </div>

      <ErrorAlert
        message={team.error ? `Could not refresh the team: ${team.error.message}` : null}
      />

      {members.length === 0 ? (
        <div className="rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
          <p className="text-base font-medium">No agents yet.</p>
          <p className="mt-1 text-sm text-slate-600">
            {canAct
              ? "Spawn a teammate to start one; it appears here as soon as it registers."
              : "Agents appear here as soon as the Lead spawns them."}
          </p>
        </div>
      ) : (
        <div className="grid gap-4 md:grid-cols-2 xl:grid-cols-3">
          {members.map((member) => (
            <AgentCard
              key={member.name}
              member={member}
              now={now}
              canAct={canAct}
              onAction={(kind) => setDialog({ kind, member })}
            />
          ))}
        </div>
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
          description={`Every active agent (${activeCount}) receives it at its next step.`}
          field={{ label: "Message", isRequired: true }}
          confirmLabel="Broadcast"
          pendingLabel="Sending…"
          onConfirm={(content) => postTo("/messages", { to: "*", content })}
          onClose={close}
        />
      )}
      {dialog && "member" in dialog && dialog.kind !== "respawn" && (
        <ActionDialog {...describeAction(dialog.kind, dialog.member)} onClose={close} />
      )}
    </section>
  );
}
