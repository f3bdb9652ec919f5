import { z } from "zod";
import { toolCwdSchema, toolNameSchema } from "../protocol/tool-approval";
import { fileChangeSchema } from "../shared/protocol/file-change";
import { findFileChangeProblem } from "./file-guard";

export const toolCallSchema = z
  .strictObject({
    tool: toolNameSchema,
    args: z.record(z.string(), z.unknown()).default({}),
    /** A connected session's working directory for this call; part of what an approval binds. */
    cwd: toolCwdSchema.optional(),
    /** How long the Lead has to answer, if the call needs an approval (the hook's own deadline). */
    timeoutSeconds: z.number().int().min(5).max(86_400).optional(),
    /** A file-writing call's base hash and diff (decision 025); outside args, so not in the call hash. */
    file: fileChangeSchema.optional(),
  })
  .superRefine((input, context) => {
    const problem = findFileChangeProblem(input);
    if (problem) context.addIssue({ code: "custom", path: ["file"], message: problem });
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
    | "TOOL_APPROVAL_DENIED"
    | "FILE_CHANGED";
  reason?: string;
  requestId?: string;
};
