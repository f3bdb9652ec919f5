import { z } from "zod";
import {
  APPROVAL_OUTCOMES,
  approvalOutcome,
  summaryOf,
  type EffectContext,
  type ProtocolTypeDefinition,
} from "./definition";
import { planApprovalResponseSchema, preparePlanApprovalResponse } from "./approval-edits";

const planPayloadSchema = z.strictObject({
  plan: z.string().trim().min(1, "a plan cannot be empty").max(50_000),
  summary: z.string().trim().max(200).optional(),
});

/**
 * A plan speaks for the work it was made for. After a task switch an old plan's decision or expiry
 * must not touch the gate, which now guards different work.
 */
function isForCurrentWork({ request, agent }: EffectContext): boolean {
  return request.workVersion === agent.workVersion && request.taskId === agent.taskId;
}

/** An agent asks the Lead to approve its plan; approval opens the agent's gate. */
export const planApproval: ProtocolTypeDefinition = {
  type: "plan_approval",
  responseType: "plan_approval_response",
  label: "plan",
  payloadSchema: planPayloadSchema,
  responseSchema: planApprovalResponseSchema,
  prepareResponse: preparePlanApprovalResponse,
  summarize: (payload) => summaryOf(String(payload.summary ?? payload.plan ?? "")),
  directions: ["agent_to_lead"],
  outcomes: APPROVAL_OUTCOMES,
  decisionOutcome: approvalOutcome,
  waitingStatus: () => "waiting_approval",
  defaultTimeoutSeconds: () => 15 * 60,
  timeout: () => ({ policy: "reject", outcome: "expired" }),
  // The newest plan is the one the agent means; the older one is withdrawn, never left pending.
  onDuplicatePending: "supersede",
  isFencedToWork: true,
  onCreated: ({ setAgentState }) => setAgentState({ gate: "pending" }),
  onApproved: async ({ setAgentState, statusAfterAnswer }) =>
    setAgentState({ gate: "approved", status: await statusAfterAnswer() }),
  onRejected: async ({ setAgentState, statusAfterAnswer }) =>
    setAgentState({ gate: "rejected", status: await statusAfterAnswer() }),
  onExpired: async (context) => {
    if (isForCurrentWork(context))
      await context.setAgentState({ gate: "rejected", status: await context.statusAfterAnswer() });
  },
};
