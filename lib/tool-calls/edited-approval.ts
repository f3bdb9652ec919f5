import type { Db } from "../db";
import type { Agent, Request } from "../generated/prisma/client";
import { toolEditsOf } from "../shared/protocol/edits";
import type { ToolVerdict } from "./schema";

// An approval the Lead gave with edits (docs/decisions/024) is usable by the call the agent asked
// for, which is then told to run the edited arguments, or by a call with exactly the edited
// arguments (bound by their hash). Either use consumes it: one approval, one run.

/**
 * The verdict an unused approval gives the call it was asked for: with the Lead's edits, the
 * arguments to run instead. A caller that cannot run them is refused, and the approval stays
 * usable by a call with exactly the edited arguments.
 */
export function approvedVerdict(
  request: Pick<Request, "id" | "response">,
  canRunEdits: boolean,
): ToolVerdict {
  const edits = toolEditsOf(request.response);
  if (!edits) return { allowed: true, requestId: request.id };
  if (canRunEdits) return { allowed: true, requestId: request.id, args: edits.editedArgs };
  return {
    allowed: false,
    code: "TOOL_APPROVAL_DENIED",
    reason: `the Lead approved an edited version of this call, not this one; call again with exactly these arguments: ${JSON.stringify(edits.editedArgs)}`,
    requestId: request.id,
  };
}

/**
 * An unused approval of this incarnation's current work whose edited arguments hash to `callHash`:
 * the agent (or a session following the Lead's edit) calls with what the Lead approved. Used: see
 * `approvalUsed` in prisma/schema.prisma.
 */
export async function findEditedApprovalFor(
  tx: Db,
  agent: Pick<Agent, "id" | "incarnation" | "workVersion" | "taskId">,
  callHash: string,
): Promise<Request | null> {
  return tx.request.findFirst({
    where: {
      agentId: agent.id,
      incarnation: agent.incarnation,
      workVersion: agent.workVersion,
      taskId: agent.taskId,
      type: "tool_approval",
      status: "approved",
      approvalUsed: false,
      response: { path: ["approvedCallHash"], equals: callHash },
    },
    orderBy: { createdAt: "desc" },
  });
}
