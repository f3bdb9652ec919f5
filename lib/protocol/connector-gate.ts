import { expand as expandBraces } from "brace-expansion";
import type { ToolRisk, ToolRiskReason } from "../shared/protocol/tool-risk";
import {
  classifyShellCommand,
  isInsideWorkspaceRoot,
  workspaceRootOf,
} from "../shared/protocol/tool-risk";
import { describeReasonsOfClass } from "../shared/protocol/gate";
import { isPlainAsParsed } from "../shared/protocol/plain-command";
import { loadShellParser, type ShellAnalysis } from "../shared/protocol/shell-command";

/**
 * The gate for a connected Claude Code session. Its tools run unsandboxed on the user's machine,
 * so nothing bounds a call the classifier misjudges: only what is known to read nothing but files
 * runs at once, and every other call, known or not, needs the Lead's yes for that exact call.
 */

/** Claude Code tools that only read. */
export const CONNECTOR_READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "Read",
  "Glob",
  "Grep",
  "LS",
  "NotebookRead",
  "BashOutput",
]);

/**
 * Claude Code tools that change nothing outside the session: its own todo list and leaving plan
 * mode (the plan itself goes to the Lead as a plan_approval). Web access is not among them.
 */
export const CONNECTOR_HARMLESS_TOOLS: ReadonlySet<string> = new Set(["TodoWrite", "ExitPlanMode"]);

/** Claude Code 2.1 names its subagent tool Agent; earlier versions, Task. */
const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(["Agent", "Task"]);

/** The subagents Claude Code 2.1 brings; an omitted type is general-purpose. */
const BUILT_IN_SUBAGENTS: ReadonlySet<string> = new Set([
  "general-purpose",
  "Explore",
  "Plan",
  "statusline-setup",
  "claude-code-guide",
  "output-style-setup",
]);

/**
 * A built-in subagent changes nothing by starting: its every tool call passes this gate as its own
 * teammate agent. Any other is defined by a file (`.claude/agents/*.md`, the user's, a plugin's)
 * whose `hooks` and `mcpServers` run commands as the subagent starts, with no call to judge.
 */
function subagentProblem(args: Record<string, unknown>): string | null {
  const type = args.subagent_type ?? "general-purpose";
  if (typeof type === "string" && BUILT_IN_SUBAGENTS.has(type)) return null;
  return `starts the subagent ${JSON.stringify(type)}, defined by a file whose hooks and MCP servers run commands on the user's machine as it starts`;
}

/**
 * Files that make programs run later with no call for this gate to judge: Claude Code's settings,
 * hooks, subagents and MCP servers, and git's hooks and configuration (`core.fsmonitor`,
 * `core.hooksPath`, aliases), husky's hooks among them.
 */
const PROGRAM_CONFIG_DIRECTORIES: ReadonlySet<string> = new Set([".claude", ".git", ".husky"]);
const PROGRAM_CONFIG_FILES: ReadonlySet<string> = new Set([
  ".mcp.json",
  ".claude.json",
  ".gitconfig",
]);

const PROGRAM_CONFIG_WHY =
  "a file that makes programs run later, unseen by this gate (Claude Code's hooks, subagents and MCP servers; git's hooks and config)";

/** The same files as a part of any word: `--output=.git/config`, `-o.claude/settings.json`. */
function mentionsProgramConfig(word: string): boolean {
  const text = word.toLowerCase().replaceAll("\\", "/");
  return [...PROGRAM_CONFIG_DIRECTORIES, ...PROGRAM_CONFIG_FILES, ".config/git"].some((name) => {
    for (let at = text.indexOf(name); at !== -1; at = text.indexOf(name, at + 1)) {
      // A name ends at a separator, or at what Win32 drops from a name's end (dots, spaces, `:…`).
      const after = text[at + name.length];
      if (after === undefined || "/:. ".includes(after)) return true;
    }
    return false;
  });
}

/**
 * A Bash command no allow rule covers: one whose word names such a file. An allow rule matches
 * only commands of plain words, and a program that reads may still write through an option
 * (`git log --output=.git/config`, `sort -o`): a word that names the file is what the gate can
 * see.
 */
function programConfigNamedBy(analysis: ShellAnalysis): string | null {
  for (const command of analysis.commands) {
    const words = [
      command.name,
      ...command.args,
      ...command.redirects.map((redirect) => redirect.target),
    ];
    for (const word of words) {
      if (word?.value && mentionsProgramConfig(word.value)) return word.value;
    }
  }
  return null;
}

function configuresPrograms(target: string): boolean {
  // macOS's and Windows' file systems ignore case by default; Windows paths use backslashes, and
  // Win32 drops a name's trailing dots and spaces and reads `name::$DATA` as the file itself.
  const segments = target
    .toLowerCase()
    .split(/[\\/]/)
    .map((segment, index) =>
      index === 0 ? segment : segment.replace(/:.*$/, "").replace(/[. ]+$/, ""),
    );
  const isGitsOwn = segments.some(
    (segment, index) => segment === ".config" && segments[index + 1] === "git",
  );
  return (
    isGitsOwn ||
    segments.some((segment) => PROGRAM_CONFIG_DIRECTORIES.has(segment)) ||
    PROGRAM_CONFIG_FILES.has(segments.at(-1) ?? "")
  );
}

/**
 * The path arguments of the reading tools (required or optional), each judged against the session's
 * directory like a Bash path: a read elsewhere on the machine (`~/.ssh`, `/proc`, another checkout)
 * needs the Lead. A Glob pattern is a glob, whose dot segments may match `..`.
 */
const READ_PATH_FIELDS: Readonly<Record<string, readonly [field: string, isRequired: boolean][]>> =
  {
    Read: [["file_path", true]],
    NotebookRead: [["notebook_path", true]],
    LS: [["path", true]],
    Glob: [
      ["path", false],
      ["pattern", true],
    ],
    Grep: [["path", false]],
  };

/** Why a reading call may reach outside the session's directory, or null when it cannot. */
function readOutsideRoot(tool: string, args: Record<string, unknown>, root: string | null) {
  const fields = READ_PATH_FIELDS[tool];
  if (!fields) return null;
  if (root === null) return `${tool} in a directory that bounds nothing`;
  for (const [field, isRequired] of fields) {
    const value = args[field];
    if (value === undefined && !isRequired) continue;
    if (typeof value !== "string") return `${tool} without a ${field} string`;
    // Claude Code trims a path before it expands `~` in it: ` ~/.ssh` is the home's .ssh.
    if (value !== value.trim()) {
      return `${tool} ${field} ${JSON.stringify(value)} has white space at an end, which Claude Code drops`;
    }
    // A descriptor or a device is no file of the session's (`/dev/fd/3` is whatever fd 3 holds).
    if (value === "/dev" || value.startsWith("/dev/")) {
      return `${tool} ${field} ${value} is a device, not a file in the session's directory`;
    }
    if (tool === "Glob" && field === "pattern") {
      const problem = globPatternProblem(value, root);
      if (problem) return `Glob pattern ${value} ${problem}`;
    } else if (!isInsideWorkspaceRoot(value, root, false)) {
      return `${tool} ${field} ${value} is outside the session's directory`;
    }
  }
  return null;
}

/** More alternatives than a real Glob pattern has, and more work than expanding one takes. */
const GLOB_ALTERNATIVES_MAX = 256;
const GLOB_EXPANSION_STEPS_MAX = 100_000;

/**
 * Why a Glob pattern may match outside the session's directory. Each of its brace alternatives is
 * a pattern of its own: `{/etc/*,x}` reads as relative and lists `/etc` (red team, round eleven),
 * and brace expansion can make `..` out of `{.,.}` or a range. Braces left in an alternative are
 * braces the expansion gave up on (past its budget the rest stays literal), which Claude Code's
 * own may still expand: the Lead judges those, as a pattern of too many alternatives.
 */
function globPatternProblem(pattern: string, root: string): string | null {
  if (pattern.includes("..")) return "is outside the session's directory";
  const alternatives = expandBraces(pattern, {
    max: GLOB_ALTERNATIVES_MAX + 1,
    maxSteps: GLOB_EXPANSION_STEPS_MAX,
  });
  if (alternatives.length > GLOB_ALTERNATIVES_MAX || alternatives.some((a) => /[{}]/.test(a))) {
    return "has braces too many or too deep to judge each alternative";
  }
  const outside = alternatives.find(
    (alternative) => alternative.includes("..") || !isInsideWorkspaceRoot(alternative, root, true),
  );
  return outside === undefined
    ? null
    : `is outside the session's directory${outside === pattern ? "" : ` (as ${outside})`}`;
}

/**
 * What the user's own shell holds and the classifier cannot see: aliases and functions from the
 * rc file Claude Code sources (`which -m '*'` prints every body, tokens and all), and the places
 * `cd NAME` finds before `./NAME` (CDPATH; zsh's CDABLE_VARS, with which `cd HOME` is $HOME). A
 * worker's shell, in the sandbox with a clean environment, has neither.
 */
function userShellProblem(analysis: ShellAnalysis): string | null {
  for (const command of analysis.commands) {
    const name = command.name?.value;
    if (name === "which" || name === "type") {
      return `${name} prints the user's aliases and functions, which may hold secrets`;
    }
    const directory = command.args.find((arg) => !arg.value?.startsWith("-"))?.value;
    // `cd ''` is bash's first CDPATH entry.
    if (name === "cd" && directory !== undefined && !/^(\/|\.\.?(\/|$))/.test(directory ?? "")) {
      return "cd to a relative name may go where the user's shell finds it (CDPATH, a variable): ./NAME is the session's";
    }
  }
  return null;
}

const FILE_CHANGING_TOOLS: Readonly<Record<string, string>> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

/** Claude Code names its tools in PascalCase and MCP tools `mcp__<server>__<tool>`; ours are snake_case. */
export function isClaudeCodeToolName(tool: string): boolean {
  return /^[A-Z]/.test(tool) || tool.startsWith("mcp__");
}

function needsApproval(message: string, extra: ToolRiskReason[] = []): ToolRisk {
  return { class: "needs_approval", reasons: [...extra, { class: "needs_approval", message }] };
}

/**
 * How much of the Lead's attention a connected session's call needs: `read_only` (runs at once)
 * or `needs_approval` (its own card). Bash is read-only only when the shell classifier, judging
 * paths against `cwd` (the directory the command runs in, as its workspace), finds nothing but
 * reads there.
 */
export async function classifyConnectorCall(
  tool: string,
  args: Record<string, unknown>,
  cwd?: string,
): Promise<ToolRisk> {
  const root = workspaceRootOf(cwd);
  if (CONNECTOR_READ_ONLY_TOOLS.has(tool)) {
    const outside = readOutsideRoot(tool, args, root);
    if (outside) return needsApproval(`${outside}: it runs unsandboxed on the user's machine`);
    return { class: "read_only", reasons: [{ class: "read_only", message: `${tool} only reads` }] };
  }
  if (SUBAGENT_TOOLS.has(tool)) {
    const problem = subagentProblem(args);
    if (problem) return needsApproval(problem);
    return {
      class: "read_only",
      reasons: [
        { class: "read_only", message: `${tool} starts a subagent whose calls pass this gate` },
      ],
    };
  }
  if (CONNECTOR_HARMLESS_TOOLS.has(tool)) {
    return {
      class: "read_only",
      reasons: [{ class: "read_only", message: `${tool} changes nothing outside the session` }],
    };
  }
  if (tool === "Bash") {
    if (typeof args.command !== "string") return needsApproval("Bash without a command string");
    // With no directory (or `/`) every relative path would count as inside: nothing is checked.
    if (root === null) {
      return needsApproval(
        `runs unsandboxed in a directory that bounds nothing (${cwd ?? "none given"})`,
      );
    }
    await loadShellParser();
    const risk = classifyShellCommand(args.command, { workspaceRoot: root });
    if (risk.class === "read_only" && risk.analysis && !isPlainAsParsed(risk.analysis)) {
      return {
        ...needsApproval(
          "uses shell syntax beyond plain words, quotes, joiners and here-docs of plain text, which a parser of bash may read otherwise than bash: it runs unsandboxed, so the Lead is asked",
          risk.reasons,
        ),
        analysis: risk.analysis,
      };
    }
    const unseen =
      risk.class === "read_only" && risk.analysis ? userShellProblem(risk.analysis) : null;
    if (unseen) return { ...needsApproval(unseen, risk.reasons), analysis: risk.analysis };
    if (risk.class === "read_only") return risk;
    // Reasons that need the Lead are the card's already; others (a write) say why it runs here.
    const why =
      risk.class === "needs_approval"
        ? ""
        : `: ${describeReasonsOfClass(risk.reasons, risk.class, risk.analysis)}`;
    const verdict = needsApproval(`runs unsandboxed on the user's machine${why}`, risk.reasons);
    const config = risk.analysis ? programConfigNamedBy(risk.analysis) : null;
    if (config !== null) {
      verdict.reasons.push({
        class: "needs_approval",
        message: `names ${config}, ${PROGRAM_CONFIG_WHY}; no allow rule covers a command that names one`,
      });
      verdict.isBeyondAllowRules = true;
    }
    // `Bash(git log:*)` is written for a read, and `git log --format=… --output=Makefile` writes
    // any file of the project with any content, unsandboxed.
    if (risk.reasons.some((reason) => reason.writesThroughOption)) {
      verdict.reasons.push({
        class: "needs_approval",
        message: "no allow rule covers a write or a program run through a reading command's option",
      });
      verdict.isBeyondAllowRules = true;
    }
    return { ...verdict, ...(risk.analysis ? { analysis: risk.analysis } : {}) };
  }
  const pathField = FILE_CHANGING_TOOLS[tool];
  if (pathField) {
    const target = typeof args[pathField] === "string" ? String(args[pathField]) : "(no path)";
    const changes = `${tool} changes ${target} on the user's machine`;
    if (!configuresPrograms(target.trim())) return needsApproval(changes);
    return {
      ...needsApproval(`${changes}: ${PROGRAM_CONFIG_WHY}; no allow rule covers it`),
      isBeyondAllowRules: true,
    };
  }
  if (tool.startsWith("mcp__")) {
    const server = tool.split("__")[1] ?? "";
    return needsApproval(`an MCP tool: it can do anything the '${server}' server can`);
  }
  return needsApproval(`${tool} is not a tool Handshake knows to be safe (fails closed)`);
}

export type ConnectorGateVerdict =
  | { allowed: true }
  | { allowed: false; code: "PLAN_GATE_BLOCKED" | "AGENT_STOPPING"; reason: string }
  | { allowed: false; code: "TOOL_APPROVAL_REQUIRED"; reason: string; needsApproval: true };

/** The reason Claude Code shows its model: plan mode is its own way to a plan the Lead approves. */
export const PLAN_REQUIRED_REASON = "the Lead requires a plan: use plan mode";

const KNOWN_GATES: ReadonlySet<string> = new Set([
  "not_required",
  "required",
  "pending",
  "approved",
  "rejected",
]);

/**
 * The plan gate for a connected session. Reads run under any known gate value. With the gate open
 * (`not_required`, `approved`) every other call still needs its own approval; with a plan required
 * it is denied, so the model goes through plan mode. An unknown gate value fails closed.
 */
export function decideConnectorGate(
  gate: string,
  isStopping: boolean,
  risk: ToolRisk,
): ConnectorGateVerdict {
  if (risk.class === "read_only" && KNOWN_GATES.has(gate)) return { allowed: true };
  if (isStopping) {
    return {
      allowed: false,
      code: "AGENT_STOPPING",
      reason: "this session agreed to stop; it changes nothing more",
    };
  }
  if (gate === "required" || gate === "rejected") {
    return { allowed: false, code: "PLAN_GATE_BLOCKED", reason: PLAN_REQUIRED_REASON };
  }
  if (gate === "pending") {
    return {
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
      reason: "the Lead is reviewing your plan: wait for the decision",
    };
  }
  if (gate !== "not_required" && gate !== "approved") {
    return {
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
      reason: `unknown gate state '${gate}' (fails closed)`,
    };
  }
  const reason = risk.reasons
    .filter((item) => item.class === "needs_approval")
    .map((item) => item.message)
    .join("; ");
  return { allowed: false, code: "TOOL_APPROVAL_REQUIRED", reason, needsApproval: true };
}
