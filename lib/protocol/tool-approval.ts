import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./canonical-json";
import { classifyConnectorCall, isClaudeCodeToolName } from "./connector-gate";
import {
  APPROVAL_OUTCOMES,
  approvalOutcome,
  summaryOf,
  type EffectContext,
  type ProtocolTypeDefinition,
} from "./definition";
import { classifyToolCall } from "../shared/protocol/tool-risk";
import { editedArgsSchema } from "../shared/protocol/edits";
import { prepareToolApprovalResponse } from "./approval-edits";
import { fileChangeSchema } from "../shared/protocol/file-change";
import { findFileChangeProblem } from "../tool-calls/file-guard";
import { toStoredRisk } from "./stored-risk";

/**
 * Our workers' tools (`bash`, `write_file`) and Claude Code's as it names them (`Bash`,
 * `mcp__github__create_issue`): letters first, then letters, digits, `_` and `-`.
 */
export const toolNameSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,127}$/, "tool names are [A-Za-z][A-Za-z0-9_-], ≤ 128");

/** The directory a connected session's call runs in: absolute, as Claude Code reports it. */
export const toolCwdSchema = z
  .string()
  .max(4_096)
  .regex(/^(\/|[A-Za-z]:[\\/])/, "cwd is an absolute path");

const toolPayloadSchema = z
  .strictObject({
    tool: toolNameSchema,
    args: z.record(z.string(), z.unknown()),
    reason: z.string().trim().max(2_000).optional(),
    cwd: toolCwdSchema.optional(),
    file: fileChangeSchema.optional(),
  })
  .refine((payload) => findFileChangeProblem(payload) === null, {
    message: "file is not the diff of this call",
    path: ["file"],
  });

/**
 * Binds an approval to one exact call: another tool, any other argument or (for a connected
 * session) another directory is another hash. Without a directory the hash is what it always was.
 */
export function hashToolCall(tool: string, args: Record<string, unknown>, cwd?: string): string {
  return createHash("sha256").update(canonicalJson({ tool, args, cwd })).digest("hex");
}

/** Claude Code's tools are judged by the connector's rules, ours by the worker's classifier. */
export function classifyAnyToolCall(tool: string, args: Record<string, unknown>, cwd?: string) {
  return isClaudeCodeToolName(tool)
    ? classifyConnectorCall(tool, args, cwd)
    : classifyToolCall(tool, args);
}

/** Parallel tool calls each wait on their own card: the agent works again once none is left. */
async function statusAfterAnswer({ setAgentState, statusAfterAnswer }: EffectContext) {
  await setAgentState({ status: await statusAfterAnswer() });
}

/** One specific risky tool call the gate sends to the Lead, even when the plan is approved. */
export const toolApproval: ProtocolTypeDefinition = {
  type: "tool_approval",
  responseType: "tool_approval_response",
  label: "tool call",
  payloadSchema: toolPayloadSchema,
  responseSchema: z.strictObject({ editedArgs: editedArgsSchema.optional() }),
  prepareResponse: (payload, draft) => prepareToolApprovalResponse(payload, draft),
  // The server's own classification and parse are stored with the request, whoever raised it, so
  // the card shows what the gate judged, never what the agent claims.
  preparePayload: async (payload) => {
    const args = payload.args as Record<string, unknown>;
    return {
      ...payload,
      callHash: hashToolCall(
        String(payload.tool),
        args,
        typeof payload.cwd === "string" ? payload.cwd : undefined,
      ),
      risk: toStoredRisk(
        await classifyAnyToolCall(
          String(payload.tool),
          args,
          typeof payload.cwd === "string" ? payload.cwd : undefined,
        ),
      ),
    };
  },
  summarize: (payload) => summaryOf(`${String(payload.tool)} ${canonicalJson(payload.args)}`),
  directions: ["agent_to_lead"],
  outcomes: APPROVAL_OUTCOMES,
  decisionOutcome: approvalOutcome,
  waitingStatus: () => "waiting_approval",
  defaultTimeoutSeconds: () => 10 * 60,
  timeout: () => ({ policy: "deny", outcome: "expired" }),
  onDuplicatePending: "supersede",
  // Claude Code runs a turn's tool calls in parallel: one pending approval per distinct call.
  onePendingPerPayloadField: "callHash",
  // Far above a turn's parallel calls; past it the agent is flooding the Lead's inbox.
  maxPendingPerAgent: 32,
  // An approval speaks for the work it was asked for, like a plan: a task switch voids it.
  isFencedToWork: true,
  onApproved: statusAfterAnswer,
  onRejected: statusAfterAnswer,
  onExpired: statusAfterAnswer,
};
