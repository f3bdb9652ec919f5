import { z } from "zod";
import type { HandshakeClient } from "../../lib/sdk/agent-client";
import { ApiError, UnreachableError } from "../../lib/sdk/errors";
import type { FileChange } from "../../lib/shared/protocol/file-change";
import { findUnsafeJson } from "../../lib/shared/http/unsafe-json";
import { LeadClient } from "../../lib/sdk/lead-client";
import { actAsAgent, ConnectRefusedError } from "./agent-token";
import { approvePlan, approveToolCall } from "./approval";
import { loadConnection, type Connection } from "./config";
import { findLinkOnTheWay, snapshotLocalFile } from "./local-file";

/** What Claude Code writes on a hook's stdin (the fields we use; it sends more). */
export const hookInputSchema = z.looseObject({
  session_id: z.string().min(1),
  cwd: z.string().min(1),
  hook_event_name: z.string(),
  tool_name: z.string().optional(),
  tool_input: z.record(z.string(), z.unknown()).optional(),
  agent_id: z.string().optional(),
  agent_type: z.string().optional(),
  model: z.string().optional(),
});
export type HookInput = z.infer<typeof hookInputSchema>;

export type HookResult = { stdout: string; exitCode: number };

/** Each request on its own gets this long; a long-poll adds its wait on top. */
const REQUEST_TIMEOUT_MS = 10_000;
/** A status report must never hold up the session. */
const STATUS_TIMEOUT_MS = 3_000;

const NOT_INSTALLED =
  "Handshake is not set up on this machine: run `handshake claude-code install --url URL --token TOKEN`";

function preToolUse(
  decision: "allow" | "deny",
  reason: string,
  updatedInput?: Record<string, unknown>,
): HookResult {
  return {
    stdout: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: decision,
        permissionDecisionReason: reason,
        // Claude Code runs the tool with this input in place of the model's.
        ...(updatedInput ? { updatedInput } : {}),
      },
    }),
    exitCode: 0,
  };
}

function permissionRequest(
  decision:
    | { behavior: "allow"; updatedInput: Record<string, unknown> }
    | {
        behavior: "deny";
        message: string;
      },
): HookResult {
  return {
    stdout: JSON.stringify({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision },
    }),
    exitCode: 0,
  };
}

/** The expected ways of not getting an answer, in words the model and the user can act on. */
function describeFailure(error: unknown, connection: Connection): string | null {
  if (error instanceof UnreachableError) {
    return `Handshake server at ${connection.url} is unreachable, so the call was denied (fails closed)`;
  }
  if (error instanceof ConnectRefusedError) {
    return `${error.message}; run \`handshake claude-code install\` with a valid connect token`;
  }
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
    return `Handshake refused this session's agent token (${error.code}: ${error.message})`;
  }
  if (error instanceof ApiError) {
    return `Handshake answered ${error.status} ${error.code}: ${error.message}`;
  }
  return null;
}

function asSession(input: HookInput) {
  return {
    sessionId: input.session_id,
    cwd: input.cwd,
    ...(input.model ? { model: input.model } : {}),
    ...(input.agent_id ? { agentId: input.agent_id } : {}),
    ...(input.agent_type ? { agentType: input.agent_type } : {}),
  };
}

function actAsSession<T>(
  connection: Connection,
  input: HookInput,
  act: (client: HandshakeClient) => Promise<T>,
  timeoutMs: number,
): Promise<T> {
  const lead = new LeadClient(connection.url, connection.token, { maxRetries: 0, timeoutMs });
  const session = asSession(input);
  return actAsAgent(
    connection,
    `session\n${session.sessionId}\n${session.agentId ?? ""}`,
    () => lead.connectSession(session),
    act,
    { maxRetries: 0, timeoutMs },
  );
}

/**
 * Claude Code applies an Edit whose old_string is not in the file by matching it loosely (curly
 * quotes for straight ones), and writes what no card showed: such an edit is denied here, before
 * anyone is asked to approve a change the card calls "does not apply".
 */
const EDIT_DOES_NOT_APPLY =
  "Handshake: the edit does not apply to the file as written, so no card can show what it would change; read the file and use its exact text";

function doesNotApply(detail: string | undefined): HookResult {
  return preToolUse("deny", detail ? `${EDIT_DOES_NOT_APPLY} (${detail})` : EDIT_DOES_NOT_APPLY);
}

const EDIT_WRITES_ANOTHER_FILE =
  "Handshake: the Lead's edit writes a file other than the one the card showed (or one that changed since), so it did not run; ask again naming that file";

function throughLink(link: string): HookResult {
  return preToolUse(
    "deny",
    `Handshake: the path goes through the symbolic link ${link}, so the card would show another file than the one written; name the file itself`,
  );
}

/** A directory on the way to the file became a link while the Lead decided. */
class LinkOnTheWayError extends Error {
  constructor(readonly link: string) {
    super(`a symbolic link appeared at ${link}`);
  }
}

async function decidePreToolUse(
  input: HookInput,
  connection: Connection,
  deadline: number,
): Promise<HookResult> {
  const tool = input.tool_name ?? "";
  const args = input.tool_input ?? {};
  const link = await findLinkOnTheWay(tool, args, input.cwd);
  if (link !== null) return throughLink(link);
  const file = await snapshotLocalFile(tool, args, input.cwd);
  // The first ask sends the file as just read; a retry looks at the way and reads it again, to
  // prove it unchanged: a new file's base hash ("absent") cannot tell a directory from a link.
  let lastRead = file;
  let isFirstAsk = true;
  const readFile = async () => {
    if (isFirstAsk) {
      isFirstAsk = false;
      return file;
    }
    const linkNow = await findLinkOnTheWay(tool, args, input.cwd);
    if (linkNow !== null) throw new LinkOnTheWayError(linkNow);
    lastRead = await snapshotLocalFile(tool, args, input.cwd);
    return lastRead;
  };
  if (file?.unshown?.reason === "does_not_apply") return doesNotApply(file.unshown.detail);
  let outcome: Awaited<ReturnType<typeof approveToolCall>>;
  try {
    outcome = await actAsSession(
      connection,
      input,
      (client) =>
        approveToolCall(
          client,
          {
            tool,
            args,
            cwd: input.cwd,
            readFile,
          },
          deadline,
          // Claude Code runs the Lead's edited arguments when they come back as `updatedInput`.
          { canRunEdits: true },
        ),
      REQUEST_TIMEOUT_MS,
    );
  } catch (error) {
    if (error instanceof LinkOnTheWayError) return throughLink(error.link);
    throw error;
  }
  if (outcome.kind !== "allowed") return preToolUse("deny", outcome.reason);
  if (!outcome.updatedInput) return preToolUse("allow", "Handshake allowed this call");
  return (
    (await refuseEditedWrite(tool, outcome.updatedInput, input.cwd, lastRead)) ??
    preToolUse("allow", "the Lead edited this call before approving it", outcome.updatedInput)
  );
}

/**
 * The Lead's edited arguments meet the checks the model's met, since Claude Code writes them as
 * they are: no link on the way, an edit that applies as written, and the file the card showed, as
 * the worker's write keeps the shown file's guard (decision 025). Red team: an edit to
 * `docs/notes.md`, `docs` a link to ~/.ssh, or to an existing `deploy.sh`, was written unseen.
 */
async function refuseEditedWrite(
  tool: string,
  edited: Record<string, unknown>,
  cwd: string,
  shown: FileChange | undefined,
): Promise<HookResult | null> {
  const link = await findLinkOnTheWay(tool, edited, cwd);
  if (link !== null) return throughLink(link);
  const file = await snapshotLocalFile(tool, edited, cwd);
  if (file?.unshown?.reason === "does_not_apply") return doesNotApply(file.unshown.detail);
  if (file !== undefined && file.baseHash !== shown?.baseHash) {
    return preToolUse("deny", EDIT_WRITES_ANOTHER_FILE);
  }
  return null;
}

async function decidePlan(
  input: HookInput,
  connection: Connection,
  deadline: number,
): Promise<HookResult> {
  const toolInput = input.tool_input ?? {};
  const plan = typeof toolInput.plan === "string" ? toolInput.plan : "";
  if (!plan.trim()) {
    return permissionRequest({ behavior: "deny", message: "Handshake: the plan is empty" });
  }
  const outcome = await actAsSession(
    connection,
    input,
    (client) => approvePlan(client, plan, deadline),
    REQUEST_TIMEOUT_MS,
  );
  // Claude Code ignores a bare allow here: the input must come back with it.
  return outcome.kind === "allowed"
    ? permissionRequest({
        behavior: "allow",
        updatedInput:
          outcome.editedPlan === undefined ? toolInput : { ...toolInput, plan: outcome.editedPlan },
      })
    : permissionRequest({ behavior: "deny", message: outcome.reason });
}

/** The board's view of the session; best effort, it never blocks or fails the session. */
async function reportStatus(input: HookInput, connection: Connection): Promise<HookResult> {
  const status = input.hook_event_name === "SessionEnd" ? "ended" : "idle";
  try {
    await actAsSession(
      connection,
      input,
      (client) => client.heartbeat(status, "external"),
      STATUS_TIMEOUT_MS,
    );
  } catch (error) {
    const failure = describeFailure(error, connection);
    if (!failure) throw error;
    process.stderr.write(`${failure}\n`);
  }
  return { stdout: "", exitCode: 0 };
}

function denyDecision(event: "PreToolUse" | "PermissionRequest", reason: string): HookResult {
  return event === "PreToolUse"
    ? preToolUse("deny", reason)
    : permissionRequest({ behavior: "deny", message: reason });
}

/**
 * The schema drops what the server would refuse (a `__proto__` key), and Claude Code runs the tool
 * with its own input, not ours: a call is judged whole or not run.
 */
function unjudgeableInput(raw: unknown): string | null {
  const unsafe = findUnsafeJson((raw as { tool_input?: unknown }).tool_input);
  if (unsafe === null) return null;
  const where = unsafe.path ? `tool_input.${unsafe.path}` : "tool_input";
  return `Handshake cannot judge this call's input (${where}: ${unsafe.problem}), so it was denied (fails closed)`;
}

/**
 * One hook call. Expected failures (no setup, server down, token refused, deadline) become a
 * `deny` that says which; anything unexpected is thrown, and the caller exits 2, which Claude Code
 * treats as a block.
 */
export async function runHook(rawInput: string, timeoutSeconds: number): Promise<HookResult> {
  const deadline = Date.now() + timeoutSeconds * 1_000;
  const raw: unknown = JSON.parse(rawInput);
  const input = hookInputSchema.parse(raw);
  const connection = await loadConnection();
  const event = input.hook_event_name;
  const isDecision =
    event === "PreToolUse" || (event === "PermissionRequest" && input.tool_name === "ExitPlanMode");
  if (!connection) {
    if (event === "PreToolUse") return preToolUse("deny", NOT_INSTALLED);
    if (isDecision) return permissionRequest({ behavior: "deny", message: NOT_INSTALLED });
    return { stdout: "", exitCode: 0 };
  }
  switch (event) {
    case "PreToolUse":
    case "PermissionRequest": {
      if (!isDecision) return { stdout: "", exitCode: 0 };
      const unjudgeable = unjudgeableInput(raw);
      if (unjudgeable !== null) return denyDecision(event, unjudgeable);
      try {
        return event === "PreToolUse"
          ? await decidePreToolUse(input, connection, deadline)
          : await decidePlan(input, connection, deadline);
      } catch (error) {
        const failure = describeFailure(error, connection);
        if (!failure) throw error;
        return denyDecision(event, failure);
      }
    }
    case "SessionStart":
    case "Stop":
    case "SubagentStop":
    case "SessionEnd":
      return reportStatus(input, connection);
    default:
      return { stdout: "", exitCode: 0 };
  }
}
