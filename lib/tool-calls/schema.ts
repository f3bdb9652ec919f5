import { z } from "zod";

export const toolCallSchema = z.strictObject({
  tool: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "tool names are [a-z][a-z0-9_]"),
  args: z.record(z.string(), z.unknown()).default({}),
});
export type ToolCallInput = z.infer<typeof toolCallSchema>;

export type ToolVerdict = {
  allowed: boolean;
  code?:
    | "PLAN_GATE_BLOCKED"
    | "PATH_OUTSIDE_WORKSPACE"
    | "AGENT_STOPPING"
    | "TOOL_APPROVAL_REQUIRED"
    | "TOOL_APPROVAL_PENDING"
    | "TOOL_APPROVAL_DENIED";
  reason?: string;
  requestId?: string;
};
