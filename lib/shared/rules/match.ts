import path from "node:path/posix";
import { entryOf, isCommandRunner, SHELLS } from "../protocol/command-lists";
import {
  RAW_EVALUATION,
  RAW_SUBSTITUTION,
  runsHiddenCode,
  type ShellAnalysis,
  type ShellRedirect,
  type SimpleCommand,
} from "../protocol/shell-command";
import { ANY_ONE, ANY_RUN, matchesGlob, matchesText, textGlob, type GlobToken } from "./glob";
import {
  COMMAND_TOOLS,
  FILE_TOOL_FAMILIES,
  PATH_ARGUMENTS,
  SEARCH_ARGUMENTS,
  type RulePattern,
} from "./pattern";
import { MAX_COMMAND_LENGTH } from "../protocol/tool-args";

/**
 * Does a rule's pattern match a tool call? Two questions, because the two mistakes cost differently
 * (docs/decisions/022): an `allow` must match only what SURELY matches — every simple command of a
 * shell command, with nothing left over — while a `deny` or `ask` matches whatever POSSIBLY
 * matches, so a word the parser cannot read, a different letter case or a command run through
 * `sudo`/`sh -c` counts against the call rather than for it.
 */
export type MatchStrength = "surely" | "possibly";

/** Where a call's relative paths start: a connected session's directory, or a worker's workspace. */
export type CallLocation = {
  /** The session's directory on the host; null for a worker (paths relative to its workspace). */
  root: string | null;
  /** The call's own directory, when it is at or below `root`. */
  cwd: string | null;
};

/** A path argument reduced to what a pattern can be matched against. */
export type RulePath =
  | { kind: "inside"; relative: string }
  | { kind: "outside" }
  /** Missing, not a string, or holding a NUL: nothing can be said about it. */
  | { kind: "unknown" };

/** One tool call, parsed once and matched against every rule. */
export type PreparedCall = {
  tool: string;
  /** The parse of a shell tool's command; null when there is no command string. */
  analysis: ShellAnalysis | null;
  /** A file tool's path argument, normalised. */
  path: RulePath | null;
  /** A searching tool's directory (Grep, Glob), normalised; null for any other tool. */
  searchRoot: RulePath | null;
};

/** Normalises a path before matching: `src/../..` is not under `src/`, absolute paths are outside. */
export function normalizeRulePath(value: unknown, location: CallLocation): RulePath {
  if (typeof value !== "string" || value === "" || value.includes("\0")) return { kind: "unknown" };
  if (value.startsWith("~")) return { kind: "outside" };
  const { root } = location;
  let relative: string;
  if (value.startsWith("/")) {
    if (root === null) return { kind: "outside" };
    relative = path.relative(root, path.normalize(value));
  } else {
    const base = root !== null && location.cwd !== null ? path.relative(root, location.cwd) : "";
    relative = path.normalize(path.join(base, value));
  }
  if (relative === "." || relative === "") return { kind: "inside", relative: "" };
  if (relative === ".." || relative.startsWith("../") || relative.startsWith("/")) {
    return { kind: "outside" };
  }
  return { kind: "inside", relative: relative.replace(/\/+$/, "") };
}

/** `location` null: a connected session with no directory that bounds its paths. */
export function prepareCall(
  tool: string,
  args: Record<string, unknown>,
  location: CallLocation | null,
  analyze: (command: string) => ShellAnalysis,
): PreparedCall {
  const command = args.command;
  const analysis = COMMAND_TOOLS.has(tool) && typeof command === "string" ? analyze(command) : null;
  const pathOf = (argument: string | undefined, value: unknown): RulePath | null =>
    !argument ? null : location === null ? { kind: "unknown" } : normalizeRulePath(value, location);
  const pathArgument = entryOf(PATH_ARGUMENTS, tool);
  const searchArgument = entryOf(SEARCH_ARGUMENTS, tool);
  return {
    tool,
    analysis,
    path: pathOf(pathArgument, pathArgument === undefined ? undefined : args[pathArgument]),
    // Without a path a search starts where the call runs.
    searchRoot: pathOf(
      searchArgument,
      searchArgument === undefined ? undefined : (args[searchArgument] ?? "."),
    ),
  };
}

type TextMatcher = (text: string) => boolean;

const asIs = (text: string) => text;
const foldCase = (text: string) => text.toLowerCase();

/** `*` is any run of characters; a final `:*` (Claude Code's prefix form) is "these words, then any". */
function commandMatcher(spec: string, isCaseBlind: boolean): TextMatcher {
  const fold = isCaseBlind ? foldCase : asIs;
  const isPrefix = spec.endsWith(":*");
  const words = textGlob(fold(isPrefix ? spec.slice(0, -2) : spec), { "*": ANY_RUN });
  const wordsThenAny: GlobToken<string>[] | null = isPrefix ? [...words, " ", ANY_RUN] : null;
  return (text) => {
    const folded = fold(text);
    return (
      matchesText(words, folded) || (wordsThenAny !== null && matchesText(wordsThenAny, folded))
    );
  };
}

type SegmentGlob = GlobToken<GlobToken<string>[]>;

/** `**` is any number of whole segments, `*` and `?` stay within one segment. */
function pathMatcher(spec: string, isCaseBlind: boolean): TextMatcher {
  const fold = isCaseBlind ? foldCase : asIs;
  const segments = fold(spec).split("/");
  const tokens: SegmentGlob[] = segments.flatMap((segment, index): SegmentGlob[] => {
    if (segment !== "**") return [textGlob(segment, { "*": ANY_RUN, "?": ANY_ONE })];
    // A last `**` after a segment is what follows its slash: a segment at least (src/** is not src).
    return index > 0 && index === segments.length - 1 ? [ANY_ONE, ANY_RUN] : [ANY_RUN];
  });
  return (relative) => matchesGlob(tokens, fold(relative).split("/"), matchesText);
}

function toolMatcher(tool: string): TextMatcher {
  const name = tool.split("").map((unit): GlobToken<string> => (unit === "*" ? ANY_RUN : unit));
  // `mcp__github` names the whole server, as in Claude Code.
  const isServer = !tool.includes("*") && tool.split("__").length === 2;
  const nameThenTool: GlobToken<string>[] | null = isServer
    ? [...name, "_", "_", ANY_ONE, ANY_RUN]
    : null;
  return (text) =>
    matchesText(name, text) || (nameThenTool !== null && matchesText(nameThenTool, text));
}

export function matchesToolName(pattern: RulePattern, tool: string): boolean {
  return pattern.tool.startsWith("mcp__") ? toolMatcher(pattern.tool)(tool) : pattern.tool === tool;
}

/**
 * Could something the path glob matches lie at or below `directory` (a search's root)? `.env` could
 * for the project's root, not for `src`; a glob that starts with `**` could for any directory.
 */
function couldMatchBelow(spec: string, directory: string): boolean {
  const globs = spec.toLowerCase().split("/");
  const segments = directory === "" ? [] : directory.toLowerCase().split("/");
  for (const [index, segment] of segments.entries()) {
    const glob = globs[index];
    if (glob === "**") return true;
    if (glob === undefined) return false;
    if (!matchesText(textGlob(glob, { "*": ANY_RUN, "?": ANY_ONE }), segment)) return false;
  }
  return true;
}

/** A deny or ask of `Read`/`Edit` against another tool of its family (`FILE_TOOL_FAMILIES`). */
function matchesInFamily(pattern: RulePattern, call: PreparedCall): boolean {
  if (!entryOf(FILE_TOOL_FAMILIES, pattern.tool)?.includes(call.tool)) return false;
  if (pattern.spec === null) return true;
  const target = call.searchRoot ?? call.path;
  if (target === null || target.kind === "unknown") return true;
  if (target.kind === "outside") return false;
  return call.searchRoot !== null
    ? couldMatchBelow(pattern.spec, target.relative)
    : pathMatcher(pattern.spec, true)(target.relative);
}

const HIDDEN =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;
/** find's actions that run a command of their own. */
const FIND_RUNS: ReadonlySet<string> = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/** Redirections that neither write a file nor read one from outside what the rule allows. */
function isHarmlessRedirect(redirect: ShellRedirect): boolean {
  if (redirect.kind !== "file") return false;
  if (redirect.operator === ">&-" || redirect.operator === "<&-") return true;
  const target = redirect.target?.value;
  if (target === undefined || target === null || redirect.target?.isGlob) return false;
  if (target === "/dev/null") return true;
  // `2>&1`: descriptors, not files.
  return (redirect.operator === ">&" || redirect.operator === "<&") && /^(\d+|-)$/.test(target);
}

/** The command's words after quote removal; null for a word only known when it runs. */
function wordsOf(command: SimpleCommand): (string | null)[] {
  return [command.name, ...command.args].map((word) =>
    word === null || word.isGlob ? null : word.value,
  );
}

function isSurelyCommand(analysis: ShellAnalysis, spec: string): boolean {
  const source = analysis.source;
  if (!analysis.isParseable || analysis.commands.length === 0) return false;
  if (
    source.length > MAX_COMMAND_LENGTH ||
    HIDDEN.test(source) ||
    RAW_SUBSTITUTION.test(source) ||
    RAW_EVALUATION.test(source)
  ) {
    return false;
  }
  // Substitutions, function definitions, arithmetic, [[ … ]] and comments are all parts no word
  // pattern says; a comment is also where a word the grammar split otherwise hid the line's rest.
  if (analysis.constructs.some((construct) => construct.kind !== "subshell")) return false;
  const matches = commandMatcher(spec, false);
  return analysis.commands.every((command) => {
    if (command.name === null || command.assignments.length > 0 || command.isBackground) {
      return false;
    }
    if (command.isInSubstitution || command.inFunction !== null) return false;
    if (!command.redirects.every(isHarmlessRedirect)) return false;
    const words = wordsOf(command);
    if (words.some((word) => word === null)) return false;
    return matches(words.join(" "));
  });
}

/**
 * Could the words match, whatever an unreadable word turns out to be? The known words before the
 * first unreadable one must agree with the pattern's literal start, as far as both go.
 */
function couldMatchWords(words: (string | null)[], spec: string, matches: TextMatcher): boolean {
  const unknownAt = words.indexOf(null);
  if (unknownAt === -1) return matches(words.join(" "));
  const known = words
    .slice(0, unknownAt)
    .map((word) => `${word} `)
    .join("")
    .toLowerCase();
  const literal = literalStart(spec).text;
  return literal.startsWith(known) || known.startsWith(literal);
}

/** The spec's text before its first wildcard, lower-cased; `isWhole` when no word is cut by it. */
function literalStart(spec: string): { text: string; isWhole: boolean } {
  const raw = /^(?:[^*\\]|\\.)*/.exec(spec)?.[0] ?? "";
  const text = raw.replace(/\\\*/g, "*").replace(/:$/, "").toLowerCase();
  return { text, isWhole: raw === spec || raw.endsWith(" ") || raw.endsWith(":") };
}

/**
 * Could options the pattern does not mention stand between its words (`git -C . push` for
 * `git push*`, `npm --prefix . run deploy` for `npm run deploy*`)? The program must be the
 * pattern's first word and its other words must follow in order; a word cut by the wildcard need
 * only start a word, and a word only known at run time could be any.
 */
function couldMatchBetweenOptions(
  program: string,
  words: (string | null)[],
  spec: string,
): boolean {
  const start = literalStart(spec);
  const pieces = start.text.split(" ").filter((piece) => piece !== "");
  if (pieces.length < 2 || pieces[0] !== program) return false;
  let next = 1;
  for (const word of words.slice(1)) {
    const piece = pieces[next];
    if (piece === undefined) break;
    const isLastCut = next === pieces.length - 1 && !start.isWhole;
    const lower = word?.toLowerCase() ?? null;
    if (lower === null || lower === piece || (isLastCut && lower.startsWith(piece))) next += 1;
  }
  return next === pieces.length;
}

function isPossiblyCommand(analysis: ShellAnalysis, spec: string): boolean {
  if (!analysis.isParseable) return true;
  const hasSubstitution = analysis.constructs.some(
    (construct) =>
      construct.kind === "command_substitution" ||
      construct.kind === "backticks" ||
      construct.kind === "process_substitution",
  );
  if (!hasSubstitution && RAW_SUBSTITUTION.test(analysis.source)) return true;
  // Code held in a value runs where no word shows it: it could be the command denied.
  if (
    RAW_EVALUATION.test(analysis.source) ||
    analysis.constructs.some((construct) => runsHiddenCode(construct, analysis.source))
  ) {
    return true;
  }
  const matches = commandMatcher(spec, true);
  return analysis.commands.some((command) => {
    if (command.name === null) return false;
    const words = wordsOf(command);
    const name = command.name.value?.toLowerCase();
    // `/bin/rm` and `./rm` are rm to a deny, as they are to the classifier, and so is zsh's `=rm`.
    const unprefixed = name?.replace(/^=(?=.)/, "");
    const program = unprefixed?.includes("/") ? path.basename(unprefixed) : unprefixed;
    // Whatever a runner or a shell runs is out of the parser's sight: count it as a match.
    if (program !== undefined && (isCommandRunner(program, words) || SHELLS.has(program))) {
      return true;
    }
    if (program === "find" && words.some((word) => word !== null && FIND_RUNS.has(word))) {
      return true;
    }
    return (
      couldMatchWords(words, spec, matches) ||
      (program !== name && couldMatchWords([program ?? null, ...words.slice(1)], spec, matches)) ||
      (program !== undefined && couldMatchBetweenOptions(program, words, spec))
    );
  });
}

/** Does the pattern match the call, as surely (allow) or possibly (deny, ask) as asked? */
export function matchesPattern(
  pattern: RulePattern,
  call: PreparedCall,
  strength: MatchStrength,
): boolean {
  const isSure = strength === "surely";
  if (!matchesToolName(pattern, call.tool)) return !isSure && matchesInFamily(pattern, call);
  if (pattern.spec === null) return true;
  switch (pattern.kind) {
    case "command":
      if (call.analysis === null) return !isSure;
      return isSure
        ? isSurelyCommand(call.analysis, pattern.spec)
        : isPossiblyCommand(call.analysis, pattern.spec);
    case "path": {
      if (call.path === null || call.path.kind === "unknown") return !isSure;
      if (call.path.kind === "outside") return false;
      return pathMatcher(pattern.spec, !isSure)(call.path.relative);
    }
    case "tool":
      return true;
    default: {
      const unreachable: never = pattern.kind;
      throw new Error(`unknown pattern kind ${String(unreachable)}`);
    }
  }
}
