import { z } from "zod";
import { AppError } from "../errors";
import { editedPlanSchema } from "../shared/protocol/edits";
import { parseEditedArgs } from "../shared/protocol/tool-args";
import type { ResponseDraft } from "./definition";
import { classifyAnyToolCall, hashToolCall } from "./tool-approval";

// Edit before approve (docs/decisions/024): the Lead approves a changed version of what was asked.
// Edits belong to an approval; a rejection runs nothing, so edits with it are refused, not dropped.
// tool-approval.ts imports this file too: it reaches this module's exports only when a decision is
// made, never while the modules load, so the two may import each other.

function invalidEdit(message: string): AppError {
  return new AppError("INVALID_RESPONSE", message);
}

function refuseEditsWithRejection(draft: ResponseDraft, field: string): void {
  if (!draft.approve)
    throw invalidEdit(`${field} comes with an approval: a rejection runs nothing`);
}

/**
 * The stored response for a tool approval: null as asked, or the edited arguments with the hash
 * that binds them. Edits must be arguments the same tool takes, and a call the gate would refuse
 * outright (a path outside the workspace) cannot be approved by editing it in.
 */
export async function prepareToolApprovalResponse(
  payload: Record<string, unknown>,
  draft: ResponseDraft,
): Promise<Record<string, unknown> | null> {
  const edited = draft.fields.editedArgs;
  if (edited === undefined) return null;
  refuseEditsWithRejection(draft, "editedArgs");
  const tool = String(payload.tool);
  const cwd = typeof payload.cwd === "string" ? payload.cwd : undefined;
  const check = parseEditedArgs(tool, edited);
  if (!check.isValid) throw invalidEdit(`editedArgs: ${check.message}`);
  const risk = await classifyAnyToolCall(tool, check.args, cwd);
  if (risk.class === "refused") {
    const why = risk.reasons.filter((reason) => reason.class === "refused");
    throw invalidEdit(
      `editedArgs: the gate refuses that call (${why.map((reason) => reason.message).join("; ")})`,
    );
  }
  const approvedCallHash = hashToolCall(tool, check.args, cwd);
  // Edits that change nothing are a plain approval: one hash, one meaning.
  if (approvedCallHash === payload.callHash) return null;
  return { editedArgs: check.args, approvedCallHash };
}

export const planApprovalResponseSchema = z.strictObject({
  editedPlan: editedPlanSchema.optional(),
});

/** The stored response for a plan approval: null as written, or the plan the Lead approved. */
export function preparePlanApprovalResponse(
  payload: Record<string, unknown>,
  draft: ResponseDraft,
): Record<string, unknown> | null {
  const edited = draft.fields.editedPlan;
  if (edited === undefined) return null;
  refuseEditsWithRejection(draft, "editedPlan");
  return edited === payload.plan ? null : { editedPlan: edited };
}
