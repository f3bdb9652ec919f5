import type { RequestView } from "@/lib/requests/views";

const TYPE_LABELS: Record<string, string> = {
  plan_approval: "Plan",
  tool_approval: "Risky tool call",
  shutdown: "Shutdown",
};

export function describeRequestType(type: string): string {
  return TYPE_LABELS[type] ?? type.replaceAll("_", " ");
}

/** One line saying what was asked: the plan's summary, the tool call, the reason to stop. */
export function summarizeRequest(request: RequestView): string {
  const { payload } = request;
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  switch (request.type) {
    case "plan_approval":
      return text(payload.summary) || text(payload.plan).split("\n").find(Boolean) || "";
    case "tool_approval":
      return [text(payload.tool), text(payload.reason)].filter(Boolean).join(": ");
    case "shutdown":
      return text(payload.reason) || (request.sender === "lead" ? "Lead asks it to stop" : "");
    default:
      return "";
  }
}

export const OUTCOME_STYLES: Record<string, string> = {
  pending: "bg-amber-50 text-amber-800 ring-amber-600/20",
  approved: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  rejected: "bg-rose-50 text-rose-800 ring-rose-600/20",
  expired: "bg-orange-50 text-orange-800 ring-orange-600/20",
  cancelled: "bg-slate-100 text-slate-700 ring-slate-500/20",
  superseded: "bg-slate-100 text-slate-700 ring-slate-500/20",
};

export function OutcomeBadge({ status }: { status: string }) {
  return (
    <span
      className={`inline-flex items-center rounded-md px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${OUTCOME_STYLES[status] ?? OUTCOME_STYLES.cancelled}`}
    >
      {status}
    </span>
  );
}

function describePolicy(policy: string): string {
  return `policy ${policy.replaceAll("_", " ")}`;
}

/**
 * Who decided, from `decidedBy`: "ada@example.com (session)", "token 'ci-bot'", "agent alice",
 * "timeout (policy reject)"; requests decided before it was recorded fall back to `respondedBy`.
 */
export function describeDecider(request: RequestView): string {
  const decidedBy = request.decidedBy;
  switch (decidedBy?.kind) {
    case "human":
      return `${request.respondedBy ?? decidedBy.userId} (session)`;
    case "token":
      return `token '${decidedBy.tokenName}'`;
    case "agent":
      return `agent ${decidedBy.agent}`;
    case "timeout":
      return `timeout (${describePolicy(decidedBy.policy)})`;
    case undefined:
      break;
    default: {
      const unreachable: never = decidedBy;
      return String(unreachable);
    }
  }
  if (request.respondedBy !== "system") return request.respondedBy ?? "—";
  switch (request.status) {
    case "expired":
      return "system (timed out)";
    case "superseded":
      return "system (newer request)";
    case "cancelled":
      return "system (agent stopped)";
    default:
      return "system";
  }
}

/** "approved by token 'ci-bot'", "expired: policy reject", "cancelled by system (agent stopped)". */
export function describeOutcome(request: RequestView): string {
  if (request.decidedBy?.kind === "timeout") {
    return `${request.status}: ${describePolicy(request.decidedBy.policy)}`;
  }
  return `${request.status} by ${describeDecider(request)}`;
}
