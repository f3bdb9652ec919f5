import {
  describeStatus,
  type AgentStatus,
  type GateState,
  type ToolHost,
} from "@/lib/shared/agents/schema";

const STATUS_STYLES: Record<AgentStatus, string> = {
  starting: "bg-sky-50 text-sky-800 ring-sky-600/20",
  working: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  idle: "bg-slate-100 text-slate-700 ring-slate-500/20",
  waiting_approval: "bg-amber-50 text-amber-800 ring-amber-600/25",
  waiting_answer: "bg-violet-50 text-violet-800 ring-violet-600/25",
  stopping: "bg-orange-50 text-orange-800 ring-orange-600/20",
  shutdown: "bg-slate-200 text-slate-700 ring-slate-500/20",
  offline: "bg-rose-50 text-rose-700 ring-rose-600/20",
  crashed: "bg-rose-100 text-rose-800 ring-rose-600/30",
};

const GATE_STYLES: Record<GateState, string> = {
  not_required: "text-slate-600",
  required: "text-amber-700",
  pending: "text-amber-700",
  approved: "text-emerald-700",
  rejected: "text-rose-700",
};

export const GATE_LABELS: Record<GateState, string> = {
  not_required: "no plan needed",
  required: "plan required",
  pending: "plan in review",
  approved: "plan approved",
  rejected: "plan rejected",
};

export function StatusBadge({ name, status }: { name: string; status: AgentStatus }) {
  return (
    <span
      data-testid="agent-status"
      data-agent={name}
      data-agent-status={status}
      className={`inline-flex shrink-0 items-center gap-1.5 rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${STATUS_STYLES[status]}`}
    >
      <span aria-hidden className="h-1.5 w-1.5 rounded-full bg-current" />
      {describeStatus(status)}
    </span>
  );
}

export function GateLabel({ gate }: { gate: GateState }) {
  return <span className={`font-medium ${GATE_STYLES[gate]}`}>{GATE_LABELS[gate]}</span>;
}

const TOOL_HOSTS: Record<ToolHost, { label: string; style: string; explanation: string }> = {
  sandboxed: {
    label: "sandboxed",
    style: "text-emerald-700",
    explanation: "bash runs in a bubblewrap sandbox: its workspace only, no network, no secrets",
  },
  no_sandbox: {
    label: "no sandbox: bash disabled",
    style: "font-semibold text-rose-700",
    explanation:
      "bubblewrap is missing or cannot run on the worker's machine, so bash is refused; install bubblewrap: apt-get install bubblewrap, then respawn",
  },
  external: {
    label: "tools run on the user's machine",
    style: "font-semibold text-amber-700",
    explanation: "Handshake's sandbox does not contain this agent's tools",
  },
};

/** What the team board says about where an agent's tools run; null until its worker reports. */
export function describeToolHost(toolHost: ToolHost | null): {
  label: string;
  style: string;
  explanation: string;
} {
  return toolHost
    ? TOOL_HOSTS[toolHost]
    : { label: "not reported yet", style: "text-slate-500", explanation: "no heartbeat has said" };
}

export function ToolHostLabel({ toolHost }: { toolHost: ToolHost | null }) {
  const { label, style, explanation } = describeToolHost(toolHost);
  return (
    <span data-testid="agent-tool-host" className={style} title={explanation}>
      {label}
    </span>
  );
}
