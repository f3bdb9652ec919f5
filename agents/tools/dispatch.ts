import type { z } from "zod";
import { decideGate, type GateVerdict } from "../../lib/shared/protocol/gate";
import { refuseWhileStopping, type StopVerdict } from "../../lib/shared/protocol/stop-gate";
import { classifyToolCall } from "../../lib/shared/protocol/tool-risk";
import type { ToolVerdict } from "../../lib/tool-calls/schema";
import { ApiError } from "../../lib/sdk/errors";
import type { FileChange } from "../../lib/shared/protocol/file-change";
import type { ToolCall, ToolResult, ToolSpec } from "../models/model";
import { bashTool } from "./bash-tool";
import { FILE_TOOLS } from "./file-tools";
import { PROTOCOL_TOOLS } from "./protocol-tools";
import { ToolError, type ToolContext, type ToolDefinition } from "./tool-definition";

export type { ToolContext, ToolDefinition } from "./tool-definition";

/** A Map, not an object: a model-chosen name like "constructor" must not find anything. */
export const TOOLS: ReadonlyMap<string, ToolDefinition> = new Map(
  [...FILE_TOOLS, bashTool, ...PROTOCOL_TOOLS].map((tool) => [tool.spec.name, tool]),
);

/** What the model is told it may call. */
export const TOOL_SPECS: readonly ToolSpec[] = [...TOOLS.values()].map((tool) => tool.spec);

/** Code for a call blocked because no verdict could be had (server unreachable or refusing). */
export const GATE_UNAVAILABLE = "GATE_UNAVAILABLE";

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map(
      (issue) =>
        `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`,
    )
    .join("; ");
}

function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}

function describeVerdict(verdict: { code?: string; reason?: string; requestId?: string }): string {
  const code = verdict.code ?? "no code given";
  const request = verdict.requestId ? ` (request ${verdict.requestId})` : "";
  return `blocked (${code}): ${verdict.reason ?? "no reason given"}${request}`;
}

type GateOutcome = { allowed: true } | { allowed: false; code?: string; content: string };

/**
 * The gate: the local verdict (plan gate and risk class, from the same lib/shared/protocol code the
 * server runs) and the server's verdict must both allow the call. The server is asked even when the
 * local verdict already blocks, because it records every attempt, and it may block what the local
 * copy allows (a gate that changed). A call that needs the Lead's approval runs only when the server
 * names the approval it uses. Anything short of an explicit yes from the server blocks.
 */
async function checkGate(
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
  file: FileChange | undefined,
): Promise<GateOutcome> {
  let local: GateVerdict | StopVerdict;
  let remote: ToolVerdict;
  try {
    local =
      refuseWhileStopping(context.isStopping(), name) ??
      decideGate(context.getGate(), name, await classifyToolCall(name, args));
    remote = await context.client.checkToolCall(name, args, file ? { file } : {});
  } catch (error) {
    return {
      allowed: false,
      code: GATE_UNAVAILABLE,
      content: `blocked: the gate could not be checked (${describeError(error)}); nothing was run`,
    };
  }
  if (!local.allowed && !("needsApproval" in local)) {
    return { allowed: false, code: local.code, content: describeVerdict(local) };
  }
  if (remote.allowed !== true) {
    return { allowed: false, code: remote.code, content: describeVerdict(remote) };
  }
  if (!local.allowed && !remote.requestId) {
    const reason = `${local.reason} (the server allowed it without naming the Lead's approval)`;
    return { allowed: false, code: local.code, content: describeVerdict({ ...local, reason }) };
  }
  return { allowed: true };
}

/** Runs one tool call behind the gate. Never throws: every failure is an error result. */
export async function dispatchToolCall(call: ToolCall, context: ToolContext): Promise<ToolResult> {
  const fail = (content: string, code?: string): ToolResult => ({
    toolCallId: call.id,
    name: call.name,
    content,
    isError: true,
    ...(code === undefined ? {} : { code }),
  });

  const tool = TOOLS.get(call.name);
  if (!tool) return fail(`unknown tool '${call.name}'; available: ${[...TOOLS.keys()].join(", ")}`);

  const parsed = tool.argsSchema.safeParse(call.args);
  if (!parsed.success)
    return fail(`invalid arguments for ${call.name}: ${describeIssues(parsed.error)}`);
  // Strict object schemas only ever produce plain objects.
  const args = parsed.data as Record<string, unknown>;

  const refusal = tool.refuse?.(context);
  if (refusal) return fail(refusal.message, refusal.code);

  try {
    // Taken before the gate is asked and checked again by the write itself (decision 025).
    const file = await tool.snapshot?.(args, context);
    const gate = await checkGate(call.name, args, context, file);
    if (!gate.allowed) return fail(gate.content, gate.code);
    const content = await tool.run(args, context, file ? { baseHash: file.baseHash } : undefined);
    return { toolCallId: call.id, name: call.name, content, isError: false };
  } catch (error) {
    return error instanceof ToolError
      ? fail(error.message, error.code)
      : fail(describeError(error));
  }
}
