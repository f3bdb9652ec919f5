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
    /**
     * The caller runs a verdict's `args` (the Lead's edits) in place of its own. Without it, an
     * approval the Lead edited is not handed to a retry of the original: a caller that ignored
     * `args` would run what the Lead did not approve (docs/decisions/024).
     */
    canRunEdits: z.boolean().optional(),
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
    | "RULE_DENIED"
    | "FILE_CHANGED";
  reason?: string;
  requestId?: string;
  /** The rule that decided (allowed, denied, or asked the Lead); docs/decisions/022. */
  ruleId?: string;
  /** The Lead's edited arguments, which the caller runs instead of its own. */
  args?: Record<string, unknown>;
};
