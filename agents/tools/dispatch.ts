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

/** Code for edited arguments from the server that this worker cannot run as they are. */
export const EDIT_UNUSABLE = "EDIT_UNUSABLE";

type GateOutcome =
  | { allowed: true; editedArgs?: Record<string, unknown> }
  | { allowed: false; code?: string; content: string };

async function localVerdict(
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<GateVerdict | StopVerdict> {
  return (
    refuseWhileStopping(context.isStopping(), name) ??
    decideGate(context.getGate(), name, await classifyToolCall(name, args))
  );
}

/**
 * The Lead approved an edited version of the call: the edits must still be arguments this tool
 * takes and must pass the local gate like any call (only the approval itself may be missing,
 * since the server named it). Otherwise nothing runs.
 */
async function checkEditedArgs(
  tool: ToolDefinition,
  name: string,
  edited: Record<string, unknown>,
  context: ToolContext,
): Promise<GateOutcome> {
  const parsed = tool.argsSchema.safeParse(edited);
  if (!parsed.success) {
    return {
      allowed: false,
      code: EDIT_UNUSABLE,
      content: `blocked (${EDIT_UNUSABLE}): the Lead's edited arguments are not valid for ${name}: ${describeIssues(parsed.error)}; nothing was run`,
    };
  }
  const editedArgs = parsed.data as Record<string, unknown>;
  let local: GateVerdict | StopVerdict;
  try {
    local = await localVerdict(name, editedArgs, context);
  } catch (error) {
    return {
      allowed: false,
      code: GATE_UNAVAILABLE,
      content: `blocked: the Lead's edited call could not be checked (${describeError(error)}); nothing was run`,
    };
  }
  if (!local.allowed && !("needsApproval" in local)) {
    return { allowed: false, code: local.code, content: describeVerdict(local) };
  }
  return { allowed: true, editedArgs };
}

/**
 * The gate: the local verdict (plan gate and risk class, from the same lib/shared/protocol code the
 * server runs) and the server's verdict must both allow the call. The server is asked even when the
 * local verdict already blocks, because it records every attempt, and it may block what the local
 * copy allows (a gate that changed). A call that needs the Lead's approval runs only when the server
 * names the approval it uses. Anything short of an explicit yes from the server blocks.
 */
async function checkGate(
  tool: ToolDefinition,
  name: string,
  args: Record<string, unknown>,
  context: ToolContext,
  file: FileChange | undefined,
): Promise<GateOutcome> {
  let local: GateVerdict | StopVerdict;
  let remote: ToolVerdict;
  try {
    local = await localVerdict(name, args, context);
    remote = await context.client.checkToolCall(name, args, {
      canRunEdits: true,
      ...(file ? { file } : {}),
    });
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
  if (remote.args !== undefined) {
    if (!remote.requestId) {
      const reason = "the server sent edited arguments without naming the Lead's approval";
      return {
        allowed: false,
        code: EDIT_UNUSABLE,
        content: describeVerdict({ code: EDIT_UNUSABLE, reason }),
      };
    }
    return checkEditedArgs(tool, name, remote.args, context);
  }
  return { allowed: true };
}

/** The model must know what ran: it asked for one thing and the Lead approved another. */
function describeEdit(name: string, editedArgs: Record<string, unknown>): string {
  const what =
    name === "bash" && typeof editedArgs.command === "string"
      ? `the command: ${editedArgs.command}`
      : `these arguments: ${JSON.stringify(editedArgs)}`;
  return `The Lead edited this call before approving it, so it ran with ${what} (not what you asked for).`;
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

  let note = "";
  try {
    // Taken before the gate is asked and checked again by the write itself (decision 025). Edited
    // arguments keep the guard of the file the Lead was shown, so an edit naming another existing
    // file is refused (FILE_CHANGED) rather than written unseen.
    const file = await tool.snapshot?.(args, context);
    const gate = await checkGate(tool, call.name, args, context, file);
    if (!gate.allowed) return fail(gate.content, gate.code);
    note = gate.editedArgs ? `${describeEdit(call.name, gate.editedArgs)}\n` : "";
    const content = await tool.run(
      gate.editedArgs ?? args,
      context,
      file ? { baseHash: file.baseHash } : undefined,
    );
    return { toolCallId: call.id, name: call.name, content: `${note}${content}`, isError: false };
  } catch (error) {
    return error instanceof ToolError
      ? fail(`${note}${error.message}`, error.code)
      : fail(`${note}${describeError(error)}`);
  }
}
