import { describe, expect, it } from "vitest";
import { decideGate, MUTATING_TOOLS } from "./gate";
import type { ToolRisk, ToolRiskClass } from "./tool-risk";

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

function riskOf(riskClass: ToolRiskClass): ToolRisk {
  return {
    class: riskClass,
    ...(riskClass === "refused" ? { code: "PATH_OUTSIDE_WORKSPACE" as const } : {}),
    reasons: [{ class: riskClass, message: `because ${riskClass}` }],
  };
}

const WORKSPACE = riskOf("workspace");

describe("decideGate", () => {
  it.each(GATES.flatMap((gate) => TOOLS.map((tool) => [gate, tool] as const)))(
    "gate %s × %s (workspace work)",
    (gate, tool) => {
      const isOpen = gate === "not_required" || gate === "approved";
      const verdict = decideGate(gate, tool, WORKSPACE);
      expect(verdict.allowed).toBe(isOpen || !MUTATING_TOOLS.has(tool));
      if (!verdict.allowed) {
        expect(verdict.code).toBe("PLAN_GATE_BLOCKED");
        expect(verdict.reason).toContain(tool);
      }
    },
  );

  it.each(GATES)("read-only bash runs under gate %s", (gate) => {
    expect(decideGate(gate, "bash", riskOf("read_only"))).toEqual({ allowed: true });
  });

  it.each(GATES)("a refused call is refused under gate %s, with its reason", (gate) => {
    expect(decideGate(gate, "bash", riskOf("refused"))).toEqual({
      allowed: false,
      code: "PATH_OUTSIDE_WORKSPACE",
      reason: "bash is refused: because refused",
    });
  });

  it("a call that needs approval passes the plan gate first, then asks", () => {
    for (const gate of ["required", "pending", "rejected"]) {
      expect(decideGate(gate, "bash", riskOf("needs_approval"))).toMatchObject({
        allowed: false,
        code: "PLAN_GATE_BLOCKED",
      });
    }
    for (const gate of ["not_required", "approved"]) {
      expect(decideGate(gate, "bash", riskOf("needs_approval"))).toEqual({
        allowed: false,
        code: "TOOL_APPROVAL_REQUIRED",
        reason: "because needs_approval",
        needsApproval: true,
      });
    }
  });

  it.each(["", "APPROVED", "open", "approved "])(
    "an unknown gate value %j fails closed for mutating tools, read-only bash included",
    (gate) => {
      for (const tool of MUTATING_TOOLS)
        expect(decideGate(gate, tool, WORKSPACE)).toMatchObject({
          allowed: false,
          code: "PLAN_GATE_BLOCKED",
        });
      expect(decideGate(gate, "bash", riskOf("read_only"))).toMatchObject({
        allowed: false,
        code: "PLAN_GATE_BLOCKED",
      });
      expect(decideGate(gate, "read_file", riskOf("read_only"))).toEqual({ allowed: true });
    },
  );
});
