import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./canonical-json";
import { APPROVAL_OUTCOMES, approvalOutcome, type ProtocolTypeDefinition } from "./definition";
import { classifyToolCall } from "../shared/protocol/tool-risk";

const toolPayloadSchema = z.strictObject({
  tool: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "tool names are [a-z][a-z0-9_]"),
  args: z.record(z.string(), z.unknown()),
  reason: z.string().trim().max(2_000).optional(),
});

/** Binds an approval to one exact call: another tool or any other argument is another hash. */
export function hashToolCall(tool: string, args: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalJson({ tool, args })).digest("hex");
}

/** One specific risky tool call the gate sends to the Lead, even when the plan is approved. */
export const toolApproval: ProtocolTypeDefinition = {
  type: "tool_approval",
  responseType: "tool_approval_response",
  label: "tool call",
  payloadSchema: toolPayloadSchema,
  responseSchema: z.strictObject({}),
  // The server's own classification and parse are stored with the request, whoever raised it, so
  // the card shows what the gate judged, never what the agent claims.
  preparePayload: async (payload) => {
    const args = payload.args as Record<string, unknown>;
    return {
      ...payload,
      callHash: hashToolCall(String(payload.tool), args),
      risk: await classifyToolCall(String(payload.tool), args),
    };
  },
  summarize: (payload) => `${String(payload.tool)} ${canonicalJson(payload.args)}`.slice(0, 200),
  directions: ["agent_to_lead"],
  outcomes: APPROVAL_OUTCOMES,
  decisionOutcome: approvalOutcome,
  waitingStatus: () => "waiting_approval",
  defaultTimeoutSeconds: () => 10 * 60,
  timeout: () => ({ policy: "deny", outcome: "expired" }),
  onDuplicatePending: "supersede",
  // An approval speaks for the work it was asked for, like a plan: a task switch voids it.
  isFencedToWork: true,
  onApproved: ({ setAgentState }) => setAgentState({ status: "working" }),
  onRejected: ({ setAgentState }) => setAgentState({ status: "working" }),
  onExpired: ({ setAgentState }) => setAgentState({ status: "working" }),
};
