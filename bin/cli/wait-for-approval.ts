import { readFile } from "node:fs/promises";
import { HandshakeClient } from "../../lib/sdk/agent-client";
import { ApiError, UnreachableError } from "../../lib/sdk/errors";
import { LeadClient } from "../../lib/sdk/lead-client";
import { actAsAgent, ConnectRefusedError } from "./agent-token";
import { approvePlan, approveToolCall, type Outcome } from "./approval";
import { loadConnection, serverUrlSchema } from "./config";
import { envAgentToken, envToken, envUrl } from "./env";

export type WaitOptions = {
  tool?: string;
  args?: string;
  plan?: string;
  agent?: string;
  url?: string;
  timeoutSeconds: number;
};

/** Exit codes a shell script branches on. */
export const EXIT = { approved: 0, rejected: 1, unanswered: 2 } as const;

export type WaitResult = { exitCode: number; message: string };

export class UsageError extends Error {}

function parseArgs(text: string | undefined): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? "{}");
  } catch {
    throw new UsageError("--args must be JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError("--args must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** The agent the script acts as: its own agent token, or a named agent of the `connect` token. */
export async function actAs<T>(
  options: Pick<WaitOptions, "agent" | "url">,
  act: (client: HandshakeClient) => Promise<T>,
): Promise<T> {
  const stored = await loadConnection();
  const given = options.url ?? envUrl() ?? stored?.url;
  if (given === undefined) {
    throw new UsageError(
      "no server URL: give --url, set HANDSHAKE_URL, or run handshake claude-code install",
    );
  }
  const parsed = serverUrlSchema.safeParse(given);
  if (!parsed.success) throw new UsageError(`${given}: ${parsed.error.issues[0]?.message}`);
  const url = parsed.data;
  const transportOptions = { maxRetries: 2, timeoutMs: 10_000 };
  const agentToken = envAgentToken();
  if (agentToken && !options.agent) {
    return act(new HandshakeClient(url, agentToken, transportOptions));
  }
  if (!options.agent) {
    throw new UsageError("set HANDSHAKE_AGENT_TOKEN, or name the agent with --agent NAME");
  }
  const token = envToken() ?? stored?.token;
  if (!token) throw new UsageError("--agent needs a connect token (HANDSHAKE_TOKEN or install)");
  const lead = new LeadClient(url, token, transportOptions);
  // A session of the connect token, as a Claude Code session is, never a plain agent: the script
  // runs on this machine, unsandboxed, so the connector's gate judges its calls (an unknown tool,
  // a write, a command that changes anything: the Lead's card). A plain agent's calls are judged
  // as a sandboxed worker's, which ran `--tool deploy` or `rm -rf` at once, with no card.
  const session = { sessionId: `script-${options.agent}`, cwd: process.cwd() };
  return actAsAgent(
    { url, token },
    `session\n${session.sessionId}\n`,
    () => lead.connectSession(session),
    act,
    transportOptions,
  );
}

function resultOf(outcome: Outcome): WaitResult {
  switch (outcome.kind) {
    case "allowed":
      return {
        exitCode: EXIT.approved,
        message:
          outcome.editedPlan === undefined
            ? "approved"
            : `approved with the Lead's edits; follow this plan:\n${outcome.editedPlan}`,
      };
    case "rejected":
      return { exitCode: EXIT.rejected, message: outcome.reason };
    case "timed_out":
      return { exitCode: EXIT.unanswered, message: outcome.reason };
  }
}

/** Asks the Lead and waits: 0 approved, 1 rejected (the feedback printed), 2 no answer. */
export async function waitForApproval(options: WaitOptions): Promise<WaitResult> {
  if (Boolean(options.tool) === Boolean(options.plan)) {
    throw new UsageError("give either --tool NAME --args JSON or --plan FILE");
  }
  const deadline = Date.now() + options.timeoutSeconds * 1_000;
  const plan = options.plan ? await readFile(options.plan, "utf8") : null;
  const args = options.tool ? parseArgs(options.args) : {};
  try {
    const outcome = await actAs(options, (client) =>
      plan !== null
        ? approvePlan(client, plan, deadline)
        : // The script runs its own command on exit 0: an approval the Lead edited must not
          // come back as one, so it is refused with the edited arguments in the message.
          approveToolCall(
            client,
            { tool: options.tool ?? "", args, cwd: process.cwd() },
            deadline,
            { canRunEdits: false },
          ),
    );
    return resultOf(outcome);
  } catch (error) {
    if (error instanceof UnreachableError || error instanceof ConnectRefusedError) {
      return { exitCode: EXIT.unanswered, message: error.message };
    }
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      return {
        exitCode: EXIT.unanswered,
        message: `Handshake refused the agent token (${error.code}: ${error.message})`,
      };
    }
    throw error;
  }
}
