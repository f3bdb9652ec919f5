import { z } from "zod";

/** The gate's answer to `POST /tool-calls`. */
export const toolVerdictSchema = z.object({
  allowed: z.boolean(),
  code: z
    .enum([
      "PLAN_GATE_BLOCKED",
      "PATH_OUTSIDE_WORKSPACE",
      "AGENT_STOPPING",
      "TOOL_APPROVAL_REQUIRED",
      "TOOL_APPROVAL_PENDING",
      "TOOL_APPROVAL_DENIED",
      "RULE_DENIED",
      "FILE_CHANGED",
    ])
    .optional(),
  reason: z.string().optional(),
  requestId: z.string().optional(),
  ruleId: z.string().optional(),
  /**
   * The Lead edited the call before approving it: run these arguments instead of the ones sent
   * (docs/decisions/024). Present only with `allowed: true` and the approval's `requestId`.
   */
  args: z.record(z.string(), z.unknown()).optional(),
});
export type ToolVerdictWire = z.infer<typeof toolVerdictSchema>;
