import { describe, expect, it } from "vitest";
import { decideGate, MUTATING_TOOLS } from "./gate";

const GATES = ["not_required", "required", "pending", "approved", "rejected"] as const;
const TOOLS = [
  "bash",
  "write_file",
  "edit_file",
  "complete_task",
  "read_file",
  "list_files",
  "send_message",
  "submit_plan",
  "idle",
];

describe("decideGate", () => {
  it.each(GATES.flatMap((gate) => TOOLS.map((tool) => [gate, tool] as const)))(
    "gate %s × %s",
    (gate, tool) => {
      const isOpen = gate === "not_required" || gate === "approved";
      const verdict = decideGate(gate, tool);
      expect(verdict.allowed).toBe(isOpen || !MUTATING_TOOLS.has(tool));
      if (!verdict.allowed) {
        expect(verdict.code).toBe("PLAN_GATE_BLOCKED");
        expect(verdict.reason).toContain(tool);
      }
    },
  );

  it.each(["", "APPROVED", "open", "approved "])(
    "an unknown gate value %j fails closed for mutating tools",
    (gate) => {
      for (const tool of MUTATING_TOOLS)
        expect(decideGate(gate, tool)).toMatchObject({ allowed: false, code: "PLAN_GATE_BLOCKED" });
      expect(decideGate(gate, "read_file")).toEqual({ allowed: true });
    },
  );
});
