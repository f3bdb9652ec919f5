import { z } from "zod";

// What a Lead's edits look like on the wire (docs/PROTOCOL.md, "Edit before approve"): the fields a
// decision may carry, and what the request stores as its `response` once approved with them. The
// request's payload keeps what the agent asked for; the response holds what the Lead approved.

export const MAX_PLAN_LENGTH = 50_000;

export const editedArgsSchema = z.record(z.string(), z.unknown());

export const editedPlanSchema = z
  .string()
  .trim()
  .min(1, "an edited plan cannot be empty")
  .max(MAX_PLAN_LENGTH);

/** A tool approval with edits: the arguments to run instead, and the hash that binds them. */
export const toolApprovalEditsSchema = z.object({
  editedArgs: editedArgsSchema,
  approvedCallHash: z.string(),
});
export type ToolApprovalEdits = z.infer<typeof toolApprovalEditsSchema>;

/** A plan approval with edits: the plan the Lead approved, which the agent must follow. */
export const planApprovalEditsSchema = z.object({ editedPlan: z.string() });

/** The Lead's edits stored with an approved tool call, or null when it was approved as asked. */
export function toolEditsOf(response: unknown): ToolApprovalEdits | null {
  const parsed = toolApprovalEditsSchema.safeParse(response);
  return parsed.success ? parsed.data : null;
}

/** The plan the Lead approved in place of the agent's, or null when approved as written. */
export function editedPlanOf(response: unknown): string | null {
  const parsed = planApprovalEditsSchema.safeParse(response);
  return parsed.success ? parsed.data.editedPlan : null;
}
