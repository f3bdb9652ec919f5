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
      "FILE_CHANGED",
    ])
    .optional(),
  reason: z.string().optional(),
  requestId: z.string().optional(),
});
export type ToolVerdictWire = z.infer<typeof toolVerdictSchema>;
