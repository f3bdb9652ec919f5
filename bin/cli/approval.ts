import type { HandshakeClient } from "../../lib/sdk/agent-client";
import type { RequestViewWire } from "../../lib/shared/api/request";
import type { ToolVerdictWire } from "../../lib/shared/api/tool-call";
import { editedPlanOf } from "../../lib/shared/protocol/edits";
import type { FileChange } from "../../lib/shared/protocol/file-change";

export type Outcome =
  /**
   * `updatedInput`: the Lead edited the call, which runs with these arguments instead;
   * `editedPlan`: the Lead approved this text in place of the plan.
   */
  | { kind: "allowed"; updatedInput?: Record<string, unknown>; editedPlan?: string }
  | { kind: "rejected"; reason: string; feedback: string | null }
  | { kind: "timed_out"; reason: string };

/** The server bounds a request's timeout; the CLI's own deadline still decides when it gives up. */
const MIN_TIMEOUT_SECONDS = 5;
const MAX_TIMEOUT_SECONDS = 86_400;

function secondsUntil(deadline: number): number {
  const seconds = Math.ceil((deadline - Date.now()) / 1_000);
  return Math.min(MAX_TIMEOUT_SECONDS, Math.max(MIN_TIMEOUT_SECONDS, seconds));
}

function timedOut(deadline: number, started: number): Outcome {
  const seconds = Math.round((deadline - started) / 1_000);
  return {
    kind: "timed_out",
    reason: `Handshake: no decision from the Lead within ${seconds} s (the deadline passed), so the call did not run`,
  };
}

/** What a decided (or still pending) request means for the caller. */
function outcomeOf(request: RequestViewWire, what: string): Outcome | null {
  switch (request.status) {
    case "approved":
      return null;
    case "rejected":
      return {
        kind: "rejected",
        reason: request.feedback
          ? `The Lead rejected this ${what}: ${request.feedback}`
          : `The Lead rejected this ${what}.`,
        feedback: request.feedback,
      };
    case "expired":
      return {
        kind: "timed_out",
        reason: `Handshake: the Lead did not decide before the ${what}'s request expired`,
      };
    default:
      return {
        kind: "rejected",
        reason: `Handshake: the ${what}'s request ended ${request.status}, so it did not run`,
        feedback: request.feedback,
      };
  }
}

function allowed(verdict: ToolVerdictWire): Outcome {
  return verdict.args ? { kind: "allowed", updatedInput: verdict.args } : { kind: "allowed" };
}

/**
 * A tool call through the server's gate: allowed at once, or raised to the Lead as a card the gate
 * creates itself; then waited on until decided or the deadline, then asked again, which consumes
 * the approval (bound to this exact call, once).
 */
export async function approveToolCall(
  client: HandshakeClient,
  call: {
    tool: string;
    args: Record<string, unknown>;
    cwd?: string;
    /** The file the call changes, read again at each ask: the retry proves it is unchanged. */
    readFile?: () => Promise<FileChange | undefined>;
  },
  deadline: number,
  /**
   * Whether the caller runs the Lead's edited arguments (the hook, through `updatedInput`). A
   * caller that cannot is refused an edited approval rather than told to run its own call.
   */
  { canRunEdits }: { canRunEdits: boolean },
): Promise<Outcome> {
  const started = Date.now();
  const ask = async () => {
    const file = await call.readFile?.();
    return client.checkToolCall(call.tool, call.args, {
      ...(call.cwd ? { cwd: call.cwd } : {}),
      timeoutSeconds: secondsUntil(deadline),
      canRunEdits,
      ...(file ? { file } : {}),
    });
  };
  const verdict = await ask();
  if (verdict.allowed) return allowed(verdict);
  const isWaiting =
    verdict.code === "TOOL_APPROVAL_REQUIRED" || verdict.code === "TOOL_APPROVAL_PENDING";
  if (!isWaiting || !verdict.requestId) {
    return {
      kind: "rejected",
      reason: `Handshake refused this call (${verdict.code ?? "REFUSED"}): ${verdict.reason ?? "no reason given"}`,
      feedback: null,
    };
  }
  const request = await client.waitForDecision(verdict.requestId, deadline);
  if (request.status === "pending") return timedOut(deadline, started);
  const decided = outcomeOf(request, "call");
  if (decided) return decided;
  // The retry is what learns the Lead's edits: the verdict names the arguments to run instead.
  const again = await ask();
  if (again.allowed) return allowed(again);
  return {
    kind: "rejected",
    reason: `Handshake refused this call after its approval (${again.code ?? "REFUSED"}): ${again.reason ?? "no reason given"}`,
    feedback: null,
  };
}

/** A plan for the Lead to approve, waited on until decided or the deadline. */
export async function approvePlan(
  client: HandshakeClient,
  plan: string,
  deadline: number,
): Promise<Outcome> {
  const started = Date.now();
  const request = await client.submitRequest({
    type: "plan_approval",
    payload: { plan },
    timeoutSeconds: secondsUntil(deadline),
  });
  const decided = await client.waitForDecision(request.id, deadline);
  if (decided.status === "pending") return timedOut(deadline, started);
  const refused = outcomeOf(decided, "plan");
  if (refused) return refused;
  const editedPlan = editedPlanOf(decided.response);
  return editedPlan === null ? { kind: "allowed" } : { kind: "allowed", editedPlan };
}
