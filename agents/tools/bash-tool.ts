import { bashArgsSchema } from "../../lib/shared/protocol/tool-args";
import {
  INSTALL_HINT,
  isWithinQuota,
  MAX_STREAM_BYTES,
  measureWorkspace,
  runSandboxed,
  SANDBOX_UNAVAILABLE,
  WORKSPACE_OVER_QUOTA,
  type BashOutcome,
  type WorkspaceUsage,
} from "./sandbox";
import { defineTool, ToolError } from "./tool-definition";

const MIB = 1024 * 1024;

function formatOutcome(outcome: BashOutcome, timeoutSeconds: number): string {
  const status = outcome.isTimedOut
    ? `timed out after ${timeoutSeconds}s; the sandbox and every process in it were killed`
    : outcome.exitCode === null
      ? `killed by ${outcome.signal ?? "a signal"}`
      : `exit code ${outcome.exitCode}`;
  const sections = [status];
  if (outcome.stdout) sections.push(`--- stdout ---\n${outcome.stdout}`);
  if (outcome.stderr) sections.push(`--- stderr ---\n${outcome.stderr}`);
  return sections.join("\n");
}

function describeUsage({ bytes, problem }: WorkspaceUsage, quota: number): string {
  if (problem !== null) return `part of the workspace cannot be measured (${problem})`;
  return `the workspace uses more than ${Math.round(quota / MIB)} MiB (its quota; at least ${Math.round(bytes / MIB)} MiB counted)`;
}

export const bashTool = defineTool({
  name: "bash",
  description:
    "Run a shell command with /bin/bash in a sandbox and return its exit code, stdout and stderr " +
    `(each capped at ${MAX_STREAM_BYTES / 1024} KiB). The sandbox sees your workspace (at /workspace, ` +
    "also HOME) read-write, the system read-only, a private /tmp, no network and no credentials; " +
    "CPU, memory, processes and file sizes are limited. Every process it starts is killed when " +
    "the command ends.",
  argsSchema: bashArgsSchema,
  // Checked before the gate: with no sandbox there is nothing to approve, and bash never runs
  // unconfined.
  refuse: (context) =>
    context.sandbox.status === "sandboxed"
      ? null
      : new ToolError(
          SANDBOX_UNAVAILABLE,
          `bash is disabled on this worker: no sandbox (${context.sandbox.reason}). The Lead can ${INSTALL_HINT}, then respawn the agent.`,
        ),
  run: async (args, context) => {
    if (context.sandbox.status !== "sandboxed")
      throw new ToolError(SANDBOX_UNAVAILABLE, "bash is disabled on this worker: no sandbox");
    const { settings } = context.sandbox;
    const quota = settings.limits.workspaceQuotaBytes;
    // Over quota, bash still runs, but no file may grow by a byte: removing files is the way out.
    const isOverQuota = !isWithinQuota(await measureWorkspace(context.workspace, quota), quota);
    const outcome = await runSandboxed(args.command, {
      workspace: context.workspace,
      timeoutSeconds: args.timeoutSeconds,
      settings: isOverQuota
        ? { ...settings, limits: { ...settings.limits, fileBytes: 0 } }
        : settings,
    });
    const report = formatOutcome(outcome, args.timeoutSeconds);
    const after = await measureWorkspace(context.workspace, quota);
    if (isWithinQuota(after, quota)) return report;
    const usage = describeUsage(after, quota);
    const remedy = after.problem === null ? "files are removed" : "it is readable again";
    const notice = isOverQuota
      ? `${usage}: this call ran with writes disabled, as every call will until ${remedy}`
      : after.problem === null
        ? `this call pushed the workspace over its quota: ${usage}; until ${remedy}, bash runs with writes disabled`
        : `${usage}: it counts as over the quota, and until ${remedy}, bash runs with writes disabled`;
    return `${report}\n--- workspace (${WORKSPACE_OVER_QUOTA}) ---\n${notice}`;
  },
});
