import type { Db } from "../db";
import type { Agent, Request } from "../generated/prisma/client";
import { toolEditsOf } from "../shared/protocol/edits";
import type { ToolVerdict } from "./schema";

// An approval the Lead gave with edits (docs/decisions/024) is usable by the call the agent asked
// for, which is then told to run the edited arguments, or by a call with exactly the edited
// arguments (bound by their hash). Either use consumes it: one approval, one run.

/** Whether an approval already let a call through: each is good for one run. */
export async function isApprovalUsed(tx: Db, requestId: string): Promise<boolean> {
  return (await tx.toolCall.findFirst({ where: { requestId, isAllowed: true } })) !== null;
}

/** The verdict an unused approval gives: with the Lead's edits, the arguments to run instead. */
export function approvedVerdict(request: Pick<Request, "id" | "response">): ToolVerdict {
  const edits = toolEditsOf(request.response);
  return {
    allowed: true,
    requestId: request.id,
    ...(edits ? { args: edits.editedArgs } : {}),
  };
}

/**
 * An unused approval of this incarnation's current work whose edited arguments hash to `callHash`:
 * the agent (or a session following the Lead's edit) calls with what the Lead approved.
 */
export async function findEditedApprovalFor(
  tx: Db,
  agent: Pick<Agent, "id" | "incarnation" | "workVersion" | "taskId">,
  callHash: string,
): Promise<Request | null> {
  const approved = await tx.request.findMany({
    where: {
      agentId: agent.id,
      incarnation: agent.incarnation,
      workVersion: agent.workVersion,
      taskId: agent.taskId,
      type: "tool_approval",
      status: "approved",
      response: { path: ["approvedCallHash"], equals: callHash },
    },
    orderBy: { createdAt: "desc" },
  });
  for (const request of approved) {
    if (!(await isApprovalUsed(tx, request.id))) return request;
  }
  return null;
}
