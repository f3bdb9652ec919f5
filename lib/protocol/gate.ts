import type { GateState } from "../agents/schema";

/** Tools that change the world. Everything else (reads, messaging, submit_plan) always runs. */
export const MUTATING_TOOLS: ReadonlySet<string> = new Set([
  "bash",
  "write_file",
  "edit_file",
  "complete_task",
]);

const OPEN_GATES: ReadonlySet<string> = new Set<GateState>(["not_required", "approved"]);

export type GateVerdict =
  { allowed: true } | { allowed: false; code: "PLAN_GATE_BLOCKED"; reason: string };

/**
 * The plan gate. Takes the gate as a plain string on purpose: a value we do not recognise (a
 * corrupted row, a newer server) must fail closed, not be coerced into something permissive.
 */
export function decideGate(gate: string, tool: string): GateVerdict {
  if (!MUTATING_TOOLS.has(tool)) return { allowed: true };
  if (OPEN_GATES.has(gate)) return { allowed: true };
  const reasons: Record<string, string> = {
    required: "a plan must be approved first: call submit_plan",
    pending: "your plan is waiting for the Lead's approval",
    rejected: "your plan was rejected: revise it and submit a new one",
  };
  return {
    allowed: false,
    code: "PLAN_GATE_BLOCKED",
    reason: `${tool} is blocked: ${reasons[gate] ?? `unknown gate state '${gate}' (fails closed)`}`,
  };
}
