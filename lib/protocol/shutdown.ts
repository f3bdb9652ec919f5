import { z } from "zod";
import {
  APPROVAL_OUTCOMES,
  approvalOutcome,
  summaryOf,
  type ProtocolTypeDefinition,
} from "./definition";

const shutdownPayloadSchema = z.strictObject({
  reason: z.string().trim().max(2_000).optional(),
});

/**
 * Either side asks the other to let the agent stop; the target decides. Lead → agent: the agent
 * answers after its current step (reject with a reason if mid-write); silence means a forced stop.
 * Agent → Lead ("my work is done"): silence means yes.
 */
export const shutdown: ProtocolTypeDefinition = {
  type: "shutdown",
  responseType: "shutdown_response",
  label: "shutdown",
  payloadSchema: shutdownPayloadSchema,
  responseSchema: z.strictObject({}),
  summarize: (payload) => summaryOf(String(payload.reason ?? "asks to shut down")),
  directions: ["agent_to_lead", "lead_to_agent"],
  outcomes: APPROVAL_OUTCOMES,
  decisionOutcome: approvalOutcome,
  // The Lead's request waits on the agent, which is still working until it answers.
  waitingStatus: (direction) => (direction === "agent_to_lead" ? "waiting_approval" : null),
  defaultTimeoutSeconds: (direction) => (direction === "lead_to_agent" ? 120 : 10 * 60),
  timeout: (direction) => ({
    policy: direction === "lead_to_agent" ? "force_stop" : "approve",
    outcome: "expired",
  }),
  // Asking twice to stop is the same question: the pending request stands.
  onDuplicatePending: "return_existing",
  isFencedToWork: false,
  stopGraceSeconds: 60,
  onApproved: ({ setAgentState }) => setAgentState({ status: "stopping" }),
  onRejected: async ({ setAgentState, statusAfterAnswer }) =>
    setAgentState({ status: await statusAfterAnswer() }),
  onExpired: async ({ direction, setAgentState, endIncarnation }) => {
    if (direction === "lead_to_agent")
      await endIncarnation("shutdown request timed out: forced stop");
    else await setAgentState({ status: "stopping" });
  },
};
