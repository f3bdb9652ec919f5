/**
 * A rule's pattern in Claude Code's notation (docs/decisions/022): `Tool`, `Tool(spec)` or an MCP
 * name glob (`mcp__github__*`). The spec is a command glob for shell tools and a path glob for file
 * tools; any other tool takes no spec, since we could not say what it would match.
 */

import { entryOf } from "../protocol/command-lists";

export type PatternKind = "tool" | "command" | "path";

export type RulePattern = {
  /** The tool name or, for MCP tools only, a glob over it. */
  tool: string;
  kind: PatternKind;
  /** The command or path glob; null for a bare tool name. */
  spec: string | null;
};

export type ParsedPattern = { ok: true; pattern: RulePattern } | { ok: false; error: string };

/** Tools whose calls are shell commands: Claude Code's and our workers'. */
export const COMMAND_TOOLS: ReadonlySet<string> = new Set(["Bash", "bash"]);

/** Tools that act on one path, and the argument that names it. */
export const PATH_ARGUMENTS: Readonly<Record<string, string>> = {
  Read: "file_path",
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
  NotebookRead: "notebook_path",
  LS: "path",
  read_file: "path",
  write_file: "path",
  edit_file: "path",
  list_files: "path",
};

/**
 * Claude Code's file tools that read or edit as a family: a rule naming `Read` or `Edit` speaks for
 * each. Only a `deny` or `ask` widens to them (fail closed); an `allow` names its tool exactly.
 */
export const FILE_TOOL_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  Read: ["NotebookRead", "LS", "Grep", "Glob"],
  Edit: ["Write", "MultiEdit", "NotebookEdit"],
};

/** Tools that search below a directory (their path argument; the call's directory without one). */
export const SEARCH_ARGUMENTS: Readonly<Record<string, string>> = { Grep: "path", Glob: "path" };

export const MAX_PATTERN_LENGTH = 500;

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
const MCP_GLOB = /^mcp__[A-Za-z0-9_*-]+$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u;

function fail(error: string): ParsedPattern {
  return { ok: false, error };
}

function parsePathSpec(tool: string, spec: string): ParsedPattern {
  if (spec.startsWith("/") || spec.startsWith("~")) {
    return fail(
      `${tool}(${spec}): path patterns are relative to the agent's workspace or project directory`,
    );
  }
  const segments = spec.split("/");
  if (segments.some((segment) => segment === "..")) {
    return fail(`${tool}(${spec}): '..' cannot appear in a path pattern`);
  }
  if (segments.some((segment) => segment.includes("**") && segment !== "**")) {
    return fail(`${tool}(${spec}): '**' must be a whole path segment (src/**, **/*.md)`);
  }
  return { ok: true, pattern: { tool, kind: "path", spec } };
}

/** Parses and validates a pattern; the error says what is wrong, for a 422 the Lead can act on. */
export function parseRulePattern(source: string): ParsedPattern {
  if (source.length === 0) return fail("the pattern is empty");
  if (source.length > MAX_PATTERN_LENGTH) {
    return fail(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  if (CONTROL.test(source)) return fail("the pattern contains a control or invisible character");
  if (source !== source.trim()) return fail("the pattern starts or ends with white space");
  const open = source.indexOf("(");
  const tool = open === -1 ? source : source.slice(0, open);
  if (tool.startsWith("mcp__")) {
    if (open !== -1) return fail(`${tool}: MCP tools take no argument pattern`);
    if (!MCP_GLOB.test(tool)) {
      return fail(`${tool}: an MCP pattern is mcp__<server>, mcp__<server>__<tool> or a * glob`);
    }
    return { ok: true, pattern: { tool, kind: "tool", spec: null } };
  }
  if (!TOOL_NAME.test(tool)) {
    return fail(
      tool.includes("*")
        ? `${tool}: only MCP tool names (mcp__…) may be globs`
        : `'${tool}' is not a tool name (letters, digits, _ and -)`,
    );
  }
  if (open === -1) return { ok: true, pattern: { tool, kind: "tool", spec: null } };
  if (!source.endsWith(")")) return fail(`${tool}(…: the argument pattern must end with ')'`);
  const spec = source.slice(open + 1, -1);
  if (spec.trim() === "") {
    return fail(`${tool}(): the argument pattern is empty; write ${tool} alone for any call`);
  }
  if (COMMAND_TOOLS.has(tool)) {
    if (spec !== spec.trim() || /\s{2}/.test(spec)) {
      return fail(`${tool}(${spec}): words are separated by single spaces`);
    }
    return { ok: true, pattern: { tool, kind: "command", spec } };
  }
  if (entryOf(PATH_ARGUMENTS, tool)) return parsePathSpec(tool, spec);
  return fail(
    `${tool} takes no argument pattern (only Bash/bash commands and file tools' paths do); write ${tool} alone`,
  );
}

/** A path relative to the session's directory when it is below it; as given otherwise. */
/** Where a card's call ran: the session's directory (rules' paths start there) and the call's. */
export type PatternLocation = { root?: unknown; cwd?: unknown };

/**
 * A path as rules see it, relative to the session's directory (normalizeRulePath, match.ts, the
 * server's version): a call in a subdirectory named `package.json` there, and a rule written
 * relative to the call's own directory allowed the project root's instead.
 */
function relativeToRoot(value: string, location: PatternLocation | undefined): string {
  const trimmed = (text: unknown) => (typeof text === "string" ? text.replace(/\/+$/, "") : null);
  const root = trimmed(location?.root);
  if (root === null) return value;
  if (value.startsWith("/")) {
    return value.startsWith(`${root}/`) ? value.slice(root.length + 1) : value;
  }
  const cwd = trimmed(location?.cwd) ?? root;
  const below = cwd.startsWith(`${root}/`) ? cwd.slice(root.length + 1) : "";
  return below ? `${below}/${value.replace(/^\.\//, "")}` : value;
}

/**
 * The pattern a card offers for "always allow this": the exact command or path of the call, so
 * the rule starts as narrow as the approval it replaces; the Lead may widen it with `*`. A star
 * (or `?` in a path) the call itself contains is escaped: unescaped, it would match far more.
 */
export function patternForCall(
  tool: string,
  args: Record<string, unknown>,
  location?: PatternLocation,
): string {
  if (COMMAND_TOOLS.has(tool) && typeof args.command === "string") {
    return `${tool}(${args.command
      .trim()
      .replace(/[ \t]+/g, " ")
      .replace(/\*/g, "\\*")})`;
  }
  const pathArgument = entryOf(PATH_ARGUMENTS, tool);
  const value = pathArgument ? args[pathArgument] : undefined;
  if (typeof value === "string" && value !== "") {
    const relative = relativeToRoot(value, location).replace(/^\.\//, "");
    return `${tool}(${relative.replace(/[*?]/g, "\\$&")})`;
  }
  return tool;
}
