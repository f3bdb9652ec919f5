import type { GateState } from "../agents/schema";
import { cutText } from "../text/cut";
import { groupReasonsByKind } from "./reason-kinds";
import type { ShellAnalysis } from "./shell-command";
import type { ToolRisk, ToolRiskClass, ToolRiskReason } from "./tool-risk";

/** Tools that change the world. Everything else (reads, messaging, submit_plan) always runs. */
export const MUTATING_TOOLS: ReadonlySet<string> = new Set([
  "bash",
  "write_file",
  "edit_file",
  "complete_task",
]);

const OPEN_GATES: ReadonlySet<string> = new Set<GateState>(["not_required", "approved"]);
const KNOWN_GATES: ReadonlySet<string> = new Set<GateState>([
  "not_required",
  "required",
  "pending",
  "approved",
  "rejected",
]);

export type GateVerdict =
  | { allowed: true }
  | { allowed: false; code: "PLAN_GATE_BLOCKED" | "PATH_OUTSIDE_WORKSPACE"; reason: string }
  /** The plan gate lets it through, but only the Lead's approval of this exact call opens it. */
  | { allowed: false; code: "TOOL_APPROVAL_REQUIRED"; reason: string; needsApproval: true };

/** A verdict's text names this much of its reasons; the card and the record keep them all. */
const MAX_REASONS_TEXT_LENGTH = 2_000;

/**
 * The reasons of one class as a verdict's text, each message once. Past a bound, one message of
 * each kind (`groupReasonsByKind`) with how many more of it there are: a command of a thousand
 * `/etc/x…` operands gives a thousand reasons, a thousand made-up `git` subcommands would hide the
 * `curl | sh` after them, and the verdict's text is returned to the agent, stored with the call
 * and shown on the card.
 */
export function describeReasonsOfClass(
  reasons: readonly ToolRiskReason[],
  riskClass: ToolRiskClass,
  analysis?: ShellAnalysis,
): string {
  const ofClass = reasons.filter((reason) => reason.class === riskClass);
  const whole = [...new Set(ofClass.map(({ message }) => message))].join("; ");
  if (whole.length <= MAX_REASONS_TEXT_LENGTH) return whole;
  const kinds = groupReasonsByKind(ofClass, analysis).map(([first, ...rest]) => {
    const others = new Set(rest.map(({ message }) => message));
    others.delete(first?.message ?? "");
    return others.size > 0
      ? `${first?.message} (and ${others.size.toLocaleString("en-US")} more like it)`
      : (first?.message ?? "");
  });
  let text = "";
  for (const [index, kind] of kinds.entries()) {
    const next = text === "" ? kind : `${text}; ${kind}`;
    if (next.length <= MAX_REASONS_TEXT_LENGTH) {
      text = next;
      continue;
    }
    // A message holds the agent's words (a path, a command's arguments): the first is cut too.
    if (index === 0) text = `${cutText(kind, MAX_REASONS_TEXT_LENGTH)}…`;
    const rest = kinds.length - (index === 0 ? 1 : index);
    return rest > 0 ? `${text}; and ${rest.toLocaleString("en-US")} more` : text;
  }
  return text;
}

function describeReasons(risk: ToolRisk): string {
  return describeReasonsOfClass(risk.reasons, risk.class, risk.analysis);
}

/**
 * The plan gate combined with the call's risk class. Takes the gate as a plain string on purpose:
 * a value we do not recognise (a corrupted row, a newer server) must fail closed, not be coerced
 * into something permissive.
 */
export function decideGate(gate: string, tool: string, risk: ToolRisk): GateVerdict {
  if (!MUTATING_TOOLS.has(tool)) return { allowed: true };
  if (risk.class === "refused") {
    return {
      allowed: false,
      code: "PATH_OUTSIDE_WORKSPACE",
      reason: `${tool} is refused: ${describeReasons(risk)}`,
    };
  }
  if (risk.class === "read_only" && KNOWN_GATES.has(gate)) return { allowed: true };
  if (!OPEN_GATES.has(gate)) {
    const reasons: Record<string, string> = {
      // Our workers have the tool; an agent over HTTP sends the request.
      required:
        "a plan must be approved first: submit one (the submit_plan tool, or POST /api/v1/requests of type plan_approval)",
      pending: "your plan is waiting for the Lead's approval",
      rejected: "your plan was rejected: revise it and submit a new one",
    };
    return {
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
      reason: `${tool} is blocked: ${reasons[gate] ?? `unknown gate state '${gate}' (fails closed)`}`,
    };
  }
  if (risk.class === "needs_approval") {
    return {
      allowed: false,
      code: "TOOL_APPROVAL_REQUIRED",
      reason: describeReasons(risk),
      needsApproval: true,
    };
  }
  return { allowed: true };
}
