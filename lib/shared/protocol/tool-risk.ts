import path from "node:path/posix";
import {
  ALLOWED_ABSOLUTE_PATHS,
  isCommandRunner,
  entryOf,
  GIT_DANGEROUS_GLOBAL_OPTIONS,
  GIT_DESTRUCTIVE_OPTIONS,
  GIT_NEEDS_APPROVAL,
  GIT_OPTIONS_WITH_VALUE,
  GIT_WORKSPACE_SUBCOMMANDS,
  INTERPRETERS,
  LEAD_MARKED_COMMANDS,
  NETWORK_COMMANDS,
  SEPARATE_VALUE_OPTIONS,
  PROGRAM_TAKERS,
  READ_ONLY_COMMANDS,
  SENSITIVE_VARIABLES,
  SHELLS,
  SYSTEM_BINARY_DIRECTORIES,
} from "./command-lists";
import { MUTATING_TOOLS } from "./gate";
import { TOOL_RISK_CLASSES } from "./tool-risk-schema";
import {
  analyzeShellCommand,
  loadShellParser,
  RAW_EVALUATION,
  RAW_SUBSTITUTION,
  runsHiddenCode,
  type ShellAnalysis,
  type ShellRedirect,
  type ShellSpan,
  type ShellWord,
  type SimpleCommand,
} from "./shell-command";
import { MAX_COMMAND_LENGTH } from "./tool-args";

/**
 * How much of the Lead's attention a tool call needs, lowest first:
 * - read_only: runs whatever the plan gate says (unless the gate value is unknown);
 * - workspace: runs once the plan is approved;
 * - needs_approval: also needs the Lead's yes for this exact call (a tool_approval request);
 * - refused: never runs and nobody is asked (a path outside the workspace).
 */
export type ToolRiskClass = (typeof TOOL_RISK_CLASSES)[number];

export type ToolRiskReason = {
  class: ToolRiskClass;
  message: string;
  /** The part of the command the reason is about (bash only). */
  span?: ShellSpan;
  /**
   * A program that reads, given an option that writes a file or runs a program (`git log
   * --output=Makefile`, `sort -o`, `rg --pre`): an allow rule written for the read is no allow of
   * that.
   */
  writesThroughOption?: true;
};

export type ToolRisk = {
  class: ToolRiskClass;
  /** The typed refusal, present exactly when the class is `refused`. */
  code?: "PATH_OUTSIDE_WORKSPACE";
  reasons: ToolRiskReason[];
  /** The parse the class was judged on (bash only). */
  analysis?: ShellAnalysis;
  /**
   * No allow rule lets it through, however broad: a write of a file that makes programs run later
   * (a session's hooks among them, which this gate depends on), or in a session a write through a
   * reading program's option (`writesThroughOption`). The Lead sees its card.
   */
  isBeyondAllowRules?: true;
};

export function isHigherRisk(a: ToolRiskClass, b: ToolRiskClass): boolean {
  return TOOL_RISK_CLASSES.indexOf(a) > TOOL_RISK_CLASSES.indexOf(b);
}

function summarize(reasons: ToolRiskReason[], analysis?: ShellAnalysis): ToolRisk {
  const top = reasons.reduce<ToolRiskClass>(
    (highest, reason) => (isHigherRisk(reason.class, highest) ? reason.class : highest),
    "read_only",
  );
  return {
    class: top,
    ...(top === "refused" ? { code: "PATH_OUTSIDE_WORKSPACE" as const } : {}),
    reasons,
    ...(analysis ? { analysis } : {}),
  };
}

/** The directory a command runs in, as segments below the workspace; null after an unknown cd. */
type Cwd = readonly string[] | null;

type PathVerdict = "inside" | "unknown" | { why: string };

/**
 * On the host (a connected session, `root` set) `/tmp` is the machine's shared one, where other
 * programs keep credentials (Kerberos' `/tmp/krb5cc_<uid>`): only the device files stay allowed.
 * A device is allowed as written, one name and nothing below it: `/dev/fd/3` may be a directory
 * (`3<.`), and `/dev/fd/3/../x`, lexically `/dev/fd/x`, is the file beside that directory.
 */
function isAllowedAbsolute(value: string, root: Root): boolean {
  const normalized = path.normalize(value);
  return ALLOWED_ABSOLUTE_PATHS.some((pattern) => {
    const isDevice = pattern.startsWith("/dev/");
    if (root !== null && !isDevice) return false;
    if (!pattern.endsWith("/*")) return (isDevice ? value : normalized) === pattern;
    const prefix = pattern.slice(0, -1);
    if (!isDevice) return normalized.startsWith(prefix) && normalized.length > prefix.length;
    return value.startsWith(prefix) && /^(?!\.\.?$)[^/]+$/.test(value.slice(prefix.length));
  });
}

/**
 * A glob segment that starts with a dot (`.?`, `.[.]`, `.*`) matches `..` in bash before 5.2 and
 * whenever globskipdots is off, so such a word is judged as if the segment were `..`.
 */
function asWorstGlob(value: string, isGlob: boolean): string {
  if (!isGlob) return value;
  return value
    .split("/")
    .map((segment) => (/^\.[^/]*[*?[]/.test(segment) ? ".." : segment))
    .join("/");
}

/**
 * Where the workspace is on the host, when the command runs there (a connected session's
 * directory): an absolute path below it is inside. Null for our workers, which see it as `/workspace`
 * in the sandbox and must not name it absolutely.
 */
type Root = string | null;

/** The segments of an absolute path below `root`, or null when it is not below it. */
function segmentsBelow(root: Root, absolute: string): string[] | null {
  if (root === null) return null;
  const normalized = path.normalize(absolute);
  if (normalized !== root && !normalized.startsWith(`${root}/`)) return null;
  return normalized.slice(root.length).split("/").filter(Boolean);
}

/** Lexical only: symlinks are the sandbox's business, since it mounts nothing but the workspace. */
function judgePath(value: string, cwd: Cwd, root: Root = null): PathVerdict {
  if (value.startsWith("~")) return { why: `${value} is in a home directory` };
  if (value.startsWith("/")) {
    return isAllowedAbsolute(value, root) || segmentsBelow(root, value) !== null
      ? "inside"
      : { why: `${value} is outside the workspace` };
  }
  const segments = value.split("/");
  if (!segments.includes("..")) return "inside";
  if (cwd === null) return "unknown";
  let depth = cwd.length;
  for (const segment of segments) {
    if (segment === "..") depth--;
    else if (segment !== "" && segment !== ".") depth++;
    if (depth < 0) return { why: `${value} leaves the workspace` };
  }
  return "inside";
}

function moveCwd(cwd: Cwd, target: string, root: Root): Cwd {
  if (target.startsWith("/")) return segmentsBelow(root, target);
  // Once in /tmp (or anywhere absolute) relative paths can no longer be checked.
  if (cwd === null || target.startsWith("~")) return null;
  const next = [...cwd];
  for (const segment of target.split("/")) {
    if (segment === "..") next.pop();
    else if (segment !== "" && segment !== ".") next.push(segment);
  }
  return next;
}

// Controls but tab and newline (a carriage return is a word character to bash but a space to the
// grammar), bidi overrides and isolates, zero-width and non-ASCII spaces.
const HIDDEN_CHARACTERS =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u00a0\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u2069\u3000\ufeff]/u;
const NON_ASCII = /[^\x20-\x7e]/;

function isOption(value: string): boolean {
  return value.startsWith("-") && value !== "-";
}

/** Does the argument use the option: long ones in any abbreviation, short ones inside a cluster? */
function usesOption(argument: string, option: string): boolean {
  if (!option.startsWith("-") || option === "--") return argument === option;
  if (option.startsWith("--")) {
    // getopt accepts any unambiguous prefix of a long option: `--out=x` is `--output=x`.
    const name = argument.split("=")[0] as string;
    return name.startsWith("--") && name.length >= 3 && option.startsWith(name);
  }
  if (option.length > 2) return argument === option;
  return /^-[^-]/.test(argument) && argument.slice(1).includes(option.slice(1));
}

/** A number zsh's arithmetic reads as itself: evaluating it expands and runs nothing. */
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
/** A printf conversion with its flags, width and precision; `%%` is a percent sign. */
const PRINTF_CONVERSION = /%(%|[^%a-zA-Z]*[a-zA-Z]?)/g;
/** printf conversions whose argument zsh takes as text, not as an arithmetic expression. */
const TEXT_CONVERSIONS: ReadonlySet<string> = new Set(["s", "b", "q", "c"]);
const TEST_ARITHMETIC = new Set(["-t", "-eq", "-ne", "-lt", "-le", "-gt", "-ge"]);
const TEST_CONNECTIVES = new Set(["!", "-a", "-o", "(", ")", "]"]);

/** A word zsh's arithmetic cannot run anything from: a plain number, written as one. */
function isPlainNumber(word: ShellWord): boolean {
  return word.value !== null && !word.isGlob && PLAIN_NUMBER.test(word.value);
}

/**
 * zsh evaluates printf's numeric arguments (`%d`, `%f`, a `*` width) and `test -t`'s operand as
 * arithmetic, where bash reads them as numbers: a subscript on a variable runs the `$(…)` it
 * expands to, built at run time or not (`'HOME[${(e):-${(#):-36}(id)}1]'`), and `PATH=1` assigns.
 * Plain numbers are safe, whatever the shell. A glob is as many words as it matches, so with one
 * among them which word lands in which slot is unknown.
 */
function evaluatesAsArithmeticInZsh(program: string, args: ShellWord[]): boolean {
  const hasGlob = args.some((arg) => arg.isGlob);
  if (program === "printf") {
    const [format, ...values] = args[0]?.value === "--" ? args.slice(1) : args;
    // A glob for the format (`printf -- *`) makes the file names the format and its arguments.
    if (format?.isGlob) return true;
    const formatText = format?.value ?? "";
    const conversions = [...formatText.matchAll(PRINTF_CONVERSION)]
      .map((match) => match[1] ?? "")
      .filter((conversion) => conversion !== "%");
    // What each argument is read as, in order: a `*` takes one as a number before its own. The
    // format is used again while arguments are left.
    const isArithmeticSlot = conversions.flatMap((conversion) => [
      ...[...conversion.matchAll(/\*/g)].map(() => true),
      !TEXT_CONVERSIONS.has(conversion.slice(-1)),
    ]);
    // zsh reads the format's escapes before its directives: `\u0025d` is `%d`, `%\144s` is `%ds`,
    // `%\052s` has a `*`. Then the directives are unknown.
    const isUnknown =
      format?.value === null ||
      /\\[uU]/.test(formatText) ||
      conversions.some((conversion) => conversion.includes("\\"));
    // `%2$d` takes arguments out of order, and a glob is as many as it matches.
    const isAnyOrder = hasGlob || conversions.some((conversion) => conversion.includes("$"));
    return values.some(
      (value, index) =>
        !isPlainNumber(value) &&
        (isUnknown ||
          (isAnyOrder
            ? isArithmeticSlot.includes(true)
            : isArithmeticSlot[index % Math.max(isArithmeticSlot.length, 1)] === true)),
    );
  }
  if (program === "test" || program === "[") {
    const isArithmetic = (arg: ShellWord) => TEST_ARITHMETIC.has(arg.value ?? "");
    return (
      (hasGlob || args.some(isArithmetic)) &&
      args.some(
        (arg) =>
          !isPlainNumber(arg) && !isArithmetic(arg) && !TEST_CONNECTIVES.has(arg.value ?? ""),
      )
    );
  }
  return false;
}

function isSensitiveVariable(name: string): boolean {
  const base = name.split("[")[0] as string;
  return SENSITIVE_VARIABLES.some((pattern) =>
    pattern.endsWith("*") ? base.startsWith(pattern.slice(0, -1)) : base === pattern,
  );
}

/** rm's long options too accept any unambiguous prefix: `--rec` is `--recursive`. */
function isRecursiveDelete(args: readonly string[]): boolean {
  return args.some(
    (arg) => usesOption(arg, "--recursive") || usesOption(arg, "-r") || usesOption(arg, "-R"),
  );
}

/**
 * GNU sed can run commands (`e`, the `e` flag of `s`) and read or write files (`r`, `w`). A script
 * counts as plain only if, once s and y commands and regex addresses are taken out, nothing but
 * addresses and a few commands that only print or move text is left; anything else (labels,
 * branches, text commands) could start a command where this reading sees text.
 */
function isSedScriptPlain(script: string): boolean {
  // A backslash is read one way only, as the start of an escape: with `.` or `[^/]` free to take
  // it too, a run of backslashes had Fibonacci-many readings to try (40 of them took 8 s).
  const rest = script
    .replace(
      /([sy])(.)((?:\\.|(?!\2)[^\\])*)\2((?:\\.|(?!\2)[^\\])*)\2([a-zA-Z0-9]*)/gs,
      (...match) => (match[1] === "s" && /[^gipIM0-9]/.test(String(match[5])) ? "e" : ""),
    )
    .replace(/\/(?:\\.|[^/\\])*\//g, "");
  return /^[\s\d$,!;{}=+~dpPnNgGhHxqQlz]*$/.test(rest);
}

/** The sed scripts of a call, or "file" when the script comes from a file. */
function findSedScripts(args: readonly ShellWord[]): (string | null)[] | "file" {
  const scripts: (string | null)[] = [];
  for (let index = 0; index < args.length; index++) {
    const value = args[index]?.value ?? null;
    if (value === null) continue;
    if (value === "-f" || usesOption(value, "--file")) return "file";
    if (value === "-e" || value === "--expression") {
      scripts.push(args[index + 1]?.value ?? null);
      index++;
    } else if (usesOption(value, "--expression") && value.includes("=")) {
      scripts.push(value.slice(value.indexOf("=") + 1));
    } else if (/^-[^-]*e./.test(value)) {
      scripts.push(value.slice(value.indexOf("e") + 1));
    }
  }
  if (scripts.length === 0) {
    const first = args.find((arg) => arg.value === null || !isOption(arg.value));
    scripts.push(first?.value ?? null);
  }
  return scripts;
}

type Mark = (
  riskClass: ToolRiskClass,
  message: string,
  span?: ShellSpan,
  flags?: Pick<ToolRiskReason, "writesThroughOption">,
) => void;

/** Judges git by its global options and subcommand; true when it may count as read-only. */
function judgeGit(args: readonly ShellWord[], mark: Mark): boolean {
  let index = 0;
  let isReadOnly = true;
  for (; index < args.length; index++) {
    const value = args[index]?.value;
    if (value === null || value === undefined) {
      mark("needs_approval", "git with a computed argument before its subcommand");
      return false;
    }
    if (!isOption(value)) break;
    const option = value.split("=")[0] as string;
    if (GIT_DANGEROUS_GLOBAL_OPTIONS.has(option)) {
      mark("needs_approval", `git ${option} changes what git runs or where it looks`);
      isReadOnly = false;
    }
    if (GIT_OPTIONS_WITH_VALUE.has(value)) index++;
  }
  const subcommand = args[index]?.value;
  if (subcommand === undefined || subcommand === null) return isReadOnly;
  const rest = args.slice(index + 1).map((arg) => arg.value ?? "");
  if (GIT_NEEDS_APPROVAL.has(subcommand)) {
    mark(
      "needs_approval",
      `git ${subcommand} rewrites history, talks to a remote or changes configuration`,
    );
    return false;
  }
  if (!GIT_WORKSPACE_SUBCOMMANDS.has(subcommand)) {
    mark(
      "needs_approval",
      `git ${subcommand} is not a known subcommand (an alias can run anything)`,
    );
    return false;
  }
  const destructive = entryOf(GIT_DESTRUCTIVE_OPTIONS, subcommand);
  if (destructive) {
    const uses = (option: string) => rest.some((arg) => usesOption(arg, option));
    const isSafe = destructive.safeOptions?.some(uses) ?? false;
    const isDestructive = destructive.options.includes("*")
      ? !isSafe
      : destructive.options.some(uses);
    if (isDestructive) {
      mark(
        "needs_approval",
        `git ${subcommand} ${rest.join(" ")} rewrites history or discards work`,
      );
      return false;
    }
  }
  const readOnly = entryOf(READ_ONLY_COMMANDS.git?.subcommands, subcommand);
  if (!readOnly) {
    mark("workspace", `git ${subcommand} changes the repository`);
    return false;
  }
  const denied = readOnly.deniedOptions?.find((option) =>
    rest.some((arg) => usesOption(arg, option)),
  );
  if (denied) {
    mark("workspace", `git ${subcommand} ${denied} writes a file or runs a program`, undefined, {
      writesThroughOption: true,
    });
    return false;
  }
  return isReadOnly;
}

const STDIN_OPERANDS: ReadonlySet<string> = new Set(["-", "/dev/stdin", "/dev/fd/0"]);
const WRITING_REDIRECTS: ReadonlySet<string> = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);
const HARMLESS_TARGETS: ReadonlySet<string> = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"]);
const VERSION_QUERIES: ReadonlySet<string> = new Set(["--version", "-V", "--help", "-h"]);
/** `NAME=…`, `NAME+=…`, `NAME[i]=…`: bash expands a `~` after its `=` and each `:`. */
const ASSIGNMENT_WORD = /^[A-Za-z_][\w.-]*(?:\[[^\]]*\])?\+?=(.*)$/s;
/** Their first operand is a pattern or a program, not a path (unless -e or -f gives it). */
const TEXT_FIRST_OPERAND: ReadonlySet<string> = new Set([
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "sed",
  "awk",
  "gawk",
  "mawk",
  "nawk",
]);

type CommandContext = { functions: ReadonlySet<string>; cwd: Cwd; root: Root; source: string };

/** A here-string with expansions, or a here-doc whose delimiter is unquoted and whose text has a `$`. */
function isComputedInput(redirect: ShellRedirect, source: string): boolean {
  if (redirect.kind === "herestring") return redirect.target?.value === null;
  const text = source.slice(redirect.span.start, redirect.span.end);
  const delimiter = /^<<-?\s*(\S+)/.exec(text)?.[1] ?? "";
  return !/['"\\]/.test(delimiter) && text.includes("$");
}

/**
 * Does the option word take the next word as its value? A long option in any abbreviation of one
 * that does (`--lab` is `--label`), without `=`; a cluster of short flags whose first value-taking
 * letter ends it (`-rm 5`; in `-mr` the `r` is `-m`'s value).
 */
function takesNextWord(word: string, valueOptions: readonly string[]): boolean {
  if (word.startsWith("--")) {
    return (
      !word.includes("=") &&
      word.length >= 3 &&
      valueOptions.some((option) => option.startsWith("--") && option.startsWith(word))
    );
  }
  const letters = new Set(
    valueOptions.filter((option) => /^-[^-]$/.test(option)).map((option) => option[1]),
  );
  const first = [...word.slice(1)].findIndex((letter) => letters.has(letter));
  return first >= 0 && first === word.length - 2;
}

/** Reasons about one simple command. Adds a `read_only` reason only when nothing else applies. */
function judgeCommand(command: SimpleCommand, context: CommandContext, judge: Mark): void {
  let isReadOnly = true;
  const mark: Mark = (riskClass, message, span = command.span, flags) => {
    if (riskClass !== "read_only") isReadOnly = false;
    judge(riskClass, message, span, flags);
  };
  const checkPath = (value: string, what: string, span: ShellSpan, isGlob = false): void => {
    const verdict = judgePath(asWorstGlob(value, isGlob), context.cwd, context.root);
    if (verdict === "unknown")
      mark(
        "needs_approval",
        `${what} ${value} follows a cd: the directory it runs in is not certain`,
        span,
      );
    else if (verdict !== "inside") mark("refused", `${what} ${verdict.why}`, span);
  };

  for (const assignment of command.assignments) {
    if (isSensitiveVariable(assignment.name)) {
      mark("needs_approval", `sets ${assignment.name}, which changes what runs`, assignment.span);
    } else {
      mark("workspace", `sets the variable ${assignment.name}`, assignment.span);
    }
  }

  for (const redirect of command.redirects) {
    if (redirect.kind !== "file") {
      // Its text is the command's input, as an argument is: `cat <<< "$KEY"` prints the variable.
      if (isComputedInput(redirect, context.source)) {
        mark("workspace", `the ${redirect.kind} is computed when it runs`, redirect.span);
      }
      continue;
    }
    // `>&-`, `<&-`: a descriptor closed, no file.
    if (redirect.operator.endsWith("&-")) continue;
    const isWriting = WRITING_REDIRECTS.has(redirect.operator);
    const value = redirect.target?.value ?? null;
    if (value === null) {
      const does = isWriting ? "writes to" : "reads from";
      mark("workspace", `${redirect.operator} ${does} a computed path`, redirect.span);
      continue;
    }
    if (redirect.operator.endsWith("&") && /^(\d+|-)$/.test(value)) continue;
    if (HARMLESS_TARGETS.has(value)) continue;
    checkPath(
      value,
      isWriting ? "writes to" : "reads from",
      redirect.span,
      redirect.target?.isGlob ?? false,
    );
    if (isWriting) mark("workspace", `writes to ${value} (${redirect.operator})`, redirect.span);
  }

  if (command.isBackground) mark("workspace", "runs in the background (&)");
  if (!command.name) return;

  const nameWord = command.name;
  const nameValue = nameWord.value;
  if (nameValue === null || nameWord.isGlob) {
    mark(
      "needs_approval",
      `the command name ${nameWord.text} is computed when it runs`,
      nameWord.span,
    );
    return;
  }
  if (NON_ASCII.test(nameValue)) {
    mark(
      "needs_approval",
      `the command name ${JSON.stringify(nameValue)} has non-ASCII characters (a look-alike?)`,
      nameWord.span,
    );
    return;
  }
  let program = nameValue;
  if (nameValue.includes("/")) {
    const directory = path.dirname(path.normalize(nameValue));
    if (!nameValue.startsWith("/") || !SYSTEM_BINARY_DIRECTORIES.includes(directory)) {
      checkPath(nameValue, "runs a program that", nameWord.span);
      mark("workspace", `runs the program ${nameValue} from the workspace`, nameWord.span);
      return;
    }
    program = path.basename(nameValue);
    mark("workspace", `runs ${nameValue} by its path`, nameWord.span);
  }
  if (context.functions.has(program)) {
    mark(
      "needs_approval",
      `calls ${program}, a function defined in this same command`,
      nameWord.span,
    );
    return;
  }

  const args = command.args;
  const values = args.map((arg) => arg.value);
  const literals = values.filter((value): value is string => value !== null);
  // After `--` every word is an operand, `-*` included (`grep -- -* ~/.ssh/id_rsa`).
  const endOfOptions = args.findIndex((arg) => arg.value === "--");
  const isOptionWordAt = (index: number): boolean => {
    const value = args[index]?.value;
    return (
      typeof value === "string" && isOption(value) && (endOfOptions < 0 || index < endOfOptions)
    );
  };
  // The word after an option that takes one is its value: no pattern, no date to set. Read left
  // to right as getopt reads: a word taken as a value is never an option that takes the next one
  // (`grep --label -m ^ FILE`: `-m` is the label, `^` the pattern, FILE the file).
  const valueOptions = entryOf(
    SEPARATE_VALUE_OPTIONS,
    program === "egrep" || program === "fgrep" ? "grep" : program,
  );
  const takenAsValue = new Set<number>();
  for (let index = 0; index < args.length && valueOptions; index++) {
    const value = args[index]?.value;
    if (takenAsValue.has(index) || !isOptionWordAt(index) || typeof value !== "string") continue;
    if (takesNextWord(value, valueOptions)) takenAsValue.add(index + 1);
  }
  const isOptionAt = (index: number): boolean => isOptionWordAt(index) && !takenAsValue.has(index);
  const operands = args.filter(
    (_, index) => index !== endOfOptions && !isOptionAt(index) && !takenAsValue.has(index),
  );
  // `touch -- -rf; rm *` runs `rm -rf …`: a glob before `--` can expand to option-like file names.
  // After an option, `--` may be its value (`sort --random-source -- *`, `find -name -- -e*`), and
  // then it ends nothing: the glob after it is still among the options.
  const wordBeforeEnd = args[endOfOptions - 1]?.value;
  const isEndCertain =
    endOfOptions === 0 || (typeof wordBeforeEnd === "string" && !isOption(wordBeforeEnd));
  const hasOptionGlob = args.some(
    (arg, index) => arg.isGlob && (endOfOptions < 0 || !isEndCertain || index < endOfOptions),
  );

  // Paths in operands and in option values (`--output=/etc/x`, `-o/etc/x`, `of=/etc/x`). echo's
  // words and a grep pattern or sed script are text, not paths.
  // `--file` gives the patterns too, and rg's `--files` and `--type-list` take none: then the first
  // operand is a path (`grep -v --file=/dev/null ~/.ssh/id_rsa` prints the whole file).
  const hasExplicitPattern = literals.some(
    (value) =>
      usesOption(value, "-e") ||
      usesOption(value, "-f") ||
      usesOption(value, "--regexp") ||
      usesOption(value, "--file") ||
      usesOption(value, "--files") ||
      usesOption(value, "--type-list"),
  );
  // A glob is as many words as it matches, the first the pattern and the rest files
  // (`grep -v ~/.*` printed the home's): it is checked as a path is.
  const pattern =
    TEXT_FIRST_OPERAND.has(program) && !hasExplicitPattern && !operands[0]?.isGlob
      ? operands[0]
      : undefined;
  // Which word is the pattern rests on which options took a value: if any did, an option the
  // list does not know, or spells otherwise, could move it, and the pattern is checked as well.
  if (pattern?.value && takenAsValue.size > 0) {
    const verdict = judgePath(
      asWorstGlob(pattern.value, pattern.isGlob),
      context.cwd,
      context.root,
    );
    if (verdict !== "inside") {
      mark(
        "needs_approval",
        `the pattern ${pattern.value} may be a file: an option before it takes a value`,
        pattern.span,
      );
    }
  }
  if (program === "echo" || program === "printf") {
    // Their words are text, but a glob or a `~` lists or names what is outside (`echo ~/.*`).
    for (const arg of args) {
      if (arg.value !== null && (arg.isGlob || arg.value.startsWith("~"))) {
        checkPath(arg.value, "the word", arg.span, arg.isGlob);
      }
      // bash expands `~` after `=` and `:` in a word shaped like an assignment (`a=~` is $HOME,
      // `a+=~root` and `a[0]=~` too).
      const assigned = arg.value === null ? null : ASSIGNMENT_WORD.exec(arg.value);
      for (const part of assigned?.[1]?.split(":") ?? []) {
        if (part.startsWith("~")) checkPath(part, "the word", arg.span, arg.isGlob);
      }
    }
  } else {
    for (const [index, arg] of args.entries()) {
      const value = arg.value;
      if (value === null || arg === pattern || index === endOfOptions) continue;
      // A word after `--` that reads as an option may still be one to a program it is passed to
      // (`npm run x -- --prefix=/etc`): its value is checked, and the word as a path too.
      if (isOption(value)) {
        // A short option's value may follow a cluster of flags: `file -bm/etc/x` is `-b -m /etc/x`.
        const attached = value.includes("=")
          ? [value.slice(value.indexOf("=") + 1)]
          : !value.startsWith("--") && value.length > 2
            ? [value.slice(2), value.slice(1).replace(/^[A-Za-z0-9]+/, "")]
            : [];
        for (const candidate of new Set(attached)) {
          if (/^(\/|~|\.[^/]*[*?[])|(^|\/)\.\.(\/|$)/.test(candidate)) {
            checkPath(candidate, "an option value", arg.span, arg.isGlob);
          }
        }
        if (isOptionAt(index)) continue;
      }
      checkPath(value, program === "cd" ? "cd to" : "the path", arg.span, arg.isGlob);
      // bash expands `~` after each `:` of a word shaped like an assignment (`x=a:~/y`).
      const assigned = ASSIGNMENT_WORD.exec(value);
      if (assigned) {
        for (const part of (assigned[1] ?? "").split(":")) {
          checkPath(part, "the path", arg.span, arg.isGlob);
        }
      }
    }
  }

  if (literals.some((value) => value.includes("$(") || value.includes("`"))) {
    // Arithmetic, array subscripts (test -v 'a[$(cmd)]', printf -v) and eval re-read such text.
    mark("needs_approval", "quoted $(…) or `…` can run if the text is evaluated again");
  } else if ((program === "test" || program === "[") && literals.includes("-v")) {
    // `test -v 'a[…]'` expands the subscript and evaluates it as arithmetic: `a[KEY]` prints a
    // variable that is no number, and `a[PATH=0]` sets one. Without one it still tells whether
    // the environment holds a variable.
    mark("needs_approval", "test -v evaluates the subscript of the name it is given");
  } else if (evaluatesAsArithmeticInZsh(program, args)) {
    mark(
      "needs_approval",
      `zsh, a session's shell, evaluates ${program}'s numbers as arithmetic, which can run code`,
    );
  }

  const joined = [program, ...values.map((value) => value ?? "?")].join(" ");
  const marked = LEAD_MARKED_COMMANDS.find(
    (prefix) => joined === prefix || joined.startsWith(`${prefix} `),
  );
  if (marked) mark("needs_approval", `${marked} is marked as needing the Lead's approval`);

  if (isCommandRunner(program, values)) {
    mark("needs_approval", `${program} runs another command or code that cannot be checked here`);
    return;
  }
  const scripts = operands.filter((arg) => !STDIN_OPERANDS.has(arg.value ?? ""));
  const isVersionQuery =
    literals.length > 0 && literals.every((value) => VERSION_QUERIES.has(value));
  if (SHELLS.has(program)) {
    if (literals.some((value) => /^-[^-]*c/.test(value) || value === "--command")) {
      mark("needs_approval", `${program} -c runs code given inline`);
    } else if (command.isPiped) {
      mark("needs_approval", `pipes into the shell ${program}`);
    } else if (scripts.length === 0 && !isVersionQuery) {
      mark("needs_approval", `${program} runs commands read from its input`);
    } else {
      mark("workspace", `${program} runs a script file`);
    }
    return;
  }
  const interpreter = entryOf(INTERPRETERS, program);
  if (interpreter) {
    const isInline = literals.some(
      (value) =>
        (/^-[^-]/.test(value) &&
          [...interpreter.inlineFlags].some((flag) => value.slice(1).includes(flag))) ||
        (interpreter.longFlags ?? []).some(
          (flag) => value === flag || value.startsWith(`${flag}=`),
        ),
    );
    if (isInline) mark("needs_approval", `${program} is given inline code`);
    else if (command.isPiped) mark("needs_approval", `pipes into the interpreter ${program}`);
    else if (scripts.length === 0 && !isVersionQuery) {
      mark("needs_approval", `${program} runs code read from its input`);
    } else mark("workspace", `${program} runs a program file`);
    return;
  }
  if (PROGRAM_TAKERS.has(program)) {
    // -f takes a value, so only a leading -f counts (`-vfs=1` sets a variable named fs).
    if (literals.some((value) => value.startsWith("-f") || usesOption(value, "--file"))) {
      mark("workspace", `${program} runs a program file`);
    } else {
      mark("needs_approval", `${program} is given a program inline (system() runs commands)`);
    }
    return;
  }
  if (NETWORK_COMMANDS.has(program)) {
    mark("needs_approval", `${program} reaches the network`);
    return;
  }
  switch (program) {
    case "rm":
      if (values.includes(null))
        mark("needs_approval", "rm with computed arguments may delete recursively");
      else if (isRecursiveDelete(literals)) mark("needs_approval", "rm -r deletes recursively");
      else if (hasOptionGlob) {
        mark("needs_approval", "rm with a glob may delete recursively (a file named -rf)");
      } else if (literals.some((value) => usesOption(value, "--no-preserve-root"))) {
        mark("needs_approval", "rm --no-preserve-root");
      } else mark("workspace", "rm deletes files");
      return;
    case "find": {
      if (literals.includes("-delete")) mark("needs_approval", "find -delete deletes every match");
      const exec = literals.find((value) => ["-exec", "-execdir", "-ok", "-okdir"].includes(value));
      if (exec) mark("needs_approval", `find ${exec} runs a command for each match`);
      break;
    }
    case "sed": {
      const sedScripts = findSedScripts(args);
      if (sedScripts === "file") mark("workspace", "sed runs a script file");
      else if (sedScripts.some((script) => script === null || !isSedScriptPlain(script))) {
        mark("needs_approval", "the sed script can run commands or read and write files (e, r, w)");
      } else mark("workspace", "sed can edit files");
      return;
    }
    case "jq":
      // `env` and `$ENV` print the environment the session runs in, API keys and all; `import`,
      // `include` and `modulemeta` read files from jq's search path (~/.jq), which `..` climbs
      // out of, and a syntax error prints their lines. jq 1.6 reads `$ ENV` as `$ENV`.
      if (literals.some((value) => /(^|[^.\w$])env\b|(^|[^.\w])ENV\b/.test(value))) {
        mark("needs_approval", "jq env or $ENV prints the environment (API keys)");
        return;
      }
      if (literals.some((value) => /(^|[^.\w$])(import|include|modulemeta)\b/.test(value))) {
        mark(
          "needs_approval",
          "jq import, include or modulemeta reads a file from jq's search path",
        );
        return;
      }
      break;
    case "git":
      if (judgeGit(args, mark)) {
        if (values.includes(null)) mark("workspace", "git with computed arguments");
        else if (hasOptionGlob)
          mark("workspace", "git with a glob may receive a file name as an option");
        // Even a reading git runs programs the repository names (core.fsmonitor, diff.external,
        // textconv, hooks), and an earlier call may have written those: git is workspace work.
        else if (isReadOnly) mark("workspace", "git runs programs its repository configures");
      }
      return;
    case "date":
      // `date MMDDhhmm[[CC]YY][.ss]` sets the clock, as -s does; only `+FORMAT` prints.
      if (operands.some((arg) => arg.value === null || !arg.value.startsWith("+"))) {
        mark("workspace", "date with an operand other than +FORMAT sets the clock");
        return;
      }
      break;
    case "cd":
      if (operands.length === 0 || operands[0]?.value === "-") {
        mark(
          "needs_approval",
          "cd without a directory goes to $HOME or back: later paths cannot be checked",
        );
        return;
      }
      // zsh, the shell a session may run in, reads `cd a b` as "replace a by b in $PWD" and
      // `cd +1` as a place from the directory stack: either can lead anywhere. A glob can expand
      // to two names (`cd [aw]??` is `cd api web`), and an option zsh does not know (`-e`, bash's,
      // or `-wt`) is an operand to it.
      const hasZshOperandOption = args.some(
        (arg, index) => isOptionAt(index) && !/^-[qsLP]+$/.test(arg.value ?? ""),
      );
      if (
        operands.length > 1 ||
        hasZshOperandOption ||
        operands[0]?.isGlob ||
        /^[+-]/.test(operands[0]?.value ?? "")
      ) {
        mark(
          "needs_approval",
          "cd with two operands, a glob or +N (or an option zsh does not know) goes elsewhere in zsh",
        );
        return;
      }
      break;
    default:
      break;
  }

  const readOnly = entryOf(READ_ONLY_COMMANDS, program);
  if (!readOnly) {
    mark("workspace", `${program} is not on the read-only list`);
    return;
  }
  const denied = readOnly.deniedOptions?.find((option) =>
    literals.some((value) => usesOption(value, option)),
  );
  if (denied) {
    mark("workspace", `${program} ${denied} can write a file or run a program`, undefined, {
      writesThroughOption: true,
    });
  } else if (hasOptionGlob && readOnly.deniedOptions) {
    mark("workspace", `${program} with a glob may receive a file name as an option`);
  } else if (values.includes(null))
    mark("workspace", `${program} with arguments computed when it runs`);
  else if (isReadOnly) mark("read_only", `${program} only reads`);
}

function judgeConstructs(analysis: ShellAnalysis, mark: Mark): void {
  for (const construct of analysis.constructs) {
    const text = analysis.source.slice(construct.span.start, construct.span.end);
    switch (construct.kind) {
      case "command_substitution":
        mark(
          "needs_approval",
          "$(…) runs a command whose output becomes part of another",
          construct.span,
        );
        break;
      case "backticks":
        mark(
          "needs_approval",
          "`…` runs a command whose output becomes part of another",
          construct.span,
        );
        break;
      case "process_substitution":
        mark("needs_approval", "<(…) or >(…) runs a command alongside another", construct.span);
        break;
      case "function_definition":
        mark("workspace", `defines the function ${construct.name}`, construct.span);
        break;
      case "arithmetic":
        // Arithmetic evaluates variables' values as expressions, array subscripts included, and a
        // subscript like a[$(cmd)] runs cmd.
        if (runsHiddenCode(construct, analysis.source)) {
          mark(
            "needs_approval",
            "arithmetic on variables can run code hidden in their values",
            construct.span,
          );
        } else mark("workspace", "arithmetic", construct.span);
        break;
      case "prompt_expansion":
        mark(
          "needs_approval",
          "${…@P} expands a value as a prompt, which runs the commands in it",
          construct.span,
        );
        break;
      case "indirect_expansion":
        mark(
          "needs_approval",
          "${!…} reads the variable a value names, which can run code in its subscript",
          construct.span,
        );
        break;
      case "assigning_expansion":
        mark("workspace", `sets the variable ${construct.name} inside a word`, construct.span);
        break;
      case "loop_variable":
        if (isSensitiveVariable(construct.name)) {
          mark(
            "needs_approval",
            `a loop sets ${construct.name}, which changes what runs`,
            construct.span,
          );
        } else mark("workspace", `a loop sets the variable ${construct.name}`, construct.span);
        break;
      case "test":
        if (/\s-(eq|ne|lt|le|gt|ge|v)\s/.test(text)) {
          mark(
            "needs_approval",
            "[[ … ]] arithmetic can run code hidden in variables",
            construct.span,
          );
        } else if (text.includes("$")) {
          // `[[ $KEY == sk-a* ]]` answers, a call at a time, what an environment variable holds.
          mark("workspace", "[[ … ]] tests a value computed when it runs", construct.span);
        }
        break;
      case "case":
        if (text.includes("$")) {
          mark("workspace", "case matches a value computed when it runs", construct.span);
        }
        break;
      case "subshell":
      case "declaration":
      case "comment":
        break;
      default: {
        const unreachable: never = construct;
        throw new Error(`unknown construct ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** Joiners after which the next command runs only if this one succeeded, in the same shell. */
const CHAIN_JOINERS: ReadonlySet<string> = new Set(["&&", "|", "|&"]);

/**
 * Does every command after this cd, up to the end of its `&&` chain, run only where the cd took
 * it? Only a cd at the top level of the command (SimpleCommand.isTopLevel: no if, loop, group,
 * subshell, pipeline, `!` or function), not reached by failing over to it (`a || cd x`), and
 * followed by `&&`: a cd that fails (no such directory, a file, two operands), that did not run
 * (`false && cd x; …`, an `if`, a loop) or that did not last (`(cd x); …`) leaves bash where it
 * was, and a `..` judged from the deeper directory climbs out of the workspace.
 */
function isCertainCd(command: SimpleCommand, joinerBefore: SimpleCommand["joiner"]): boolean {
  const isFailedOver = joinerBefore === "||" || joinerBefore === "|" || joinerBefore === "|&";
  return command.isTopLevel && !isFailedOver && command.joiner === "&&";
}

/**
 * Where a command runs. `workspaceRoot`: the absolute host directory it runs in, for commands run
 * outside our sandbox (a connected session); `/` is never taken as one.
 */
export type ShellWorkspace = { workspaceRoot?: string | undefined };

function rootOf(workspace: ShellWorkspace): Root {
  if (!workspace.workspaceRoot?.startsWith("/")) return null;
  const root = path.normalize(workspace.workspaceRoot).replace(/\/+$/, "");
  return root === "" ? null : root;
}

/** The host directory a connected session's paths are judged against, or null when none bounds them. */
export function workspaceRootOf(cwd: string | undefined): string | null {
  return rootOf({ workspaceRoot: cwd });
}

/** Is an absolute directory the workspace `root` or below it (lexically)? */
export function isBelowWorkspaceRoot(directory: string, root: string): boolean {
  return directory.startsWith("/") && segmentsBelow(root, directory) !== null;
}

/**
 * Is a path a host tool names (Read's `file_path`, a Glob pattern) inside the workspace `root`?
 * Relative paths count from the root itself; a glob's dot segments count as `..`.
 */
export function isInsideWorkspaceRoot(value: string, root: string, isGlob = false): boolean {
  return !value.includes("\0") && judgePath(asWorstGlob(value, isGlob), [], root) === "inside";
}

/** Classifies a parsed bash command: the highest class of all its parts wins, each says why. */
export function classifyShellAnalysis(
  analysis: ShellAnalysis,
  workspace: ShellWorkspace = {},
): ToolRisk {
  const root = rootOf(workspace);
  const reasons: ToolRiskReason[] = [];
  const mark: Mark = (riskClass, message, span, flags) => {
    reasons.push({ class: riskClass, message, ...(span ? { span } : {}), ...flags });
  };
  for (const problem of analysis.problems) {
    mark("needs_approval", `cannot be parsed reliably: ${problem.message}`, problem.span);
  }
  const source = analysis.source;
  // The workers' bash takes no more; nobody can review more as one command.
  if (source.length > MAX_COMMAND_LENGTH) {
    mark("needs_approval", `longer than ${MAX_COMMAND_LENGTH} characters`);
  }
  const hidden = HIDDEN_CHARACTERS.exec(source);
  if (hidden) {
    const codePoint = (hidden[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    mark("needs_approval", `contains a hidden or control character (U+${codePoint})`, {
      start: hidden.index,
      end: hidden.index + hidden[0].length,
    });
  }
  // A backstop on the raw text: the grammar does not see every substitution (a backtick in an
  // unquoted here-doc body, inside `${x:-…}`), and a missed one would run code under any class.
  const substitution = RAW_SUBSTITUTION.exec(source);
  if (substitution) {
    mark("needs_approval", "may substitute a command's output (` or $( in the text)", {
      start: substitution.index,
      end: substitution.index + substitution[0].length,
    });
  }
  const evaluation = RAW_EVALUATION.exec(source);
  if (evaluation) {
    mark("needs_approval", `may run code held in a value (${evaluation[0]} in the text)`, {
      start: evaluation.index,
      end: evaluation.index + evaluation[0].length,
    });
  }
  judgeConstructs(analysis, mark);
  const functions = new Set(
    analysis.constructs.flatMap((construct) =>
      construct.kind === "function_definition" ? [construct.name] : [],
    ),
  );
  let cwd: Cwd = [];
  let hasMoved = false;
  let joinerBefore: SimpleCommand["joiner"] = null;
  for (const [index, command] of analysis.commands.entries()) {
    judgeCommand(command, { functions, cwd, root, source }, mark);
    if (command.name?.value === "cd") {
      const target = command.args.find((arg) => arg.value === null || !isOption(arg.value));
      const isCertain = isCertainCd(command, index === 0 ? null : joinerBefore);
      cwd =
        isCertain && cwd !== null && target?.value
          ? moveCwd(cwd, asWorstGlob(target.value, target.isGlob), root)
          : null;
      hasMoved = true;
    } else if (hasMoved && !CHAIN_JOINERS.has(command.joiner ?? "")) {
      // What runs after this runs whether or not the cd before it did.
      cwd = null;
    }
    joinerBefore = command.joiner;
  }
  return summarize(reasons, analysis);
}

/** Classifies one bash command. The shell parser must be loaded (loadShellParser). */
export function classifyShellCommand(command: string, workspace: ShellWorkspace = {}): ToolRisk {
  return classifyShellAnalysis(analyzeShellCommand(command), workspace);
}

/**
 * The judgements of the last few hundred bash commands, by their text. A worker repeats its
 * commands (`git status`, the tests), and their parse and judgement were about a tenth of the
 * server's CPU per rule-allowed verdict (issue 18). Only the judgement without a workspace, which
 * depends on the text alone, and only short commands. A judgement's size is its JSON's length: a
 * typical one is about a thousand characters, while a crafted command of a thousand (`a&a&…`)
 * parses into two hundred thousand, so the map is bounded by the sum of sizes as well as by count.
 * Frozen, because every call of the same command shares it: a caller that changed it would change
 * the next call's.
 */
const MAX_REMEMBERED_JUDGEMENTS = 512;
const MAX_REMEMBERED_COMMAND_LENGTH = 1_000;
const MAX_REMEMBERED_SIZE = 1_000_000;
const rememberedJudgements = new Map<string, { risk: ToolRisk; size: number }>();
let rememberedSize = 0;

/** A judgement is JSON-shaped: a tree without cycles, each part frozen whatever it was before. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function classifyRememberedCommand(command: string): ToolRisk {
  const remembered = rememberedJudgements.get(command);
  if (remembered) {
    // A map iterates in insertion order: moved to the end, the least recently used come first.
    rememberedJudgements.delete(command);
    rememberedJudgements.set(command, remembered);
    return remembered.risk;
  }
  const risk = classifyShellCommand(command);
  if (command.length > MAX_REMEMBERED_COMMAND_LENGTH) return risk;
  // The largest judgement of a 1,000-character command a red-team pass found was about 230,000.
  const size = JSON.stringify(risk).length;
  for (const [oldest, { size: oldestSize }] of rememberedJudgements) {
    const isFull =
      rememberedJudgements.size >= MAX_REMEMBERED_JUDGEMENTS ||
      rememberedSize + size > MAX_REMEMBERED_SIZE;
    if (!isFull) break;
    rememberedJudgements.delete(oldest);
    rememberedSize -= oldestSize;
  }
  rememberedJudgements.set(command, { risk: deepFreeze(risk), size });
  rememberedSize += size;
  return risk;
}

/**
 * The class of any tool call. Async only because the bash grammar loads once per process. The
 * worker and the server both call this, so they never judge the same call differently.
 */
export async function classifyToolCall(
  tool: string,
  args: Record<string, unknown>,
): Promise<ToolRisk> {
  if (tool === "bash") {
    if (typeof args.command !== "string") {
      return summarize([{ class: "needs_approval", message: "bash without a command string" }]);
    }
    await loadShellParser();
    return classifyRememberedCommand(args.command);
  }
  if (tool === "write_file" || tool === "edit_file") {
    // A path that is not a non-empty string cannot be judged; a tool host that passed it on could
    // write wherever it points (Node's fs takes a URL-like object).
    if (typeof args.path !== "string" || args.path === "") {
      return summarize([
        { class: "refused", message: `${tool}: the path must be a non-empty string` },
      ]);
    }
    const target = args.path;
    if (target.includes("\0")) {
      return summarize([
        { class: "refused", message: `${tool}: the path contains a NUL character` },
      ]);
    }
    const verdict = judgePath(target, []);
    if (typeof verdict === "object")
      return summarize([{ class: "refused", message: `${tool}: ${verdict.why}` }]);
    return summarize([{ class: "workspace", message: `${tool} changes ${target}` }]);
  }
  if (MUTATING_TOOLS.has(tool))
    return summarize([{ class: "workspace", message: `${tool} changes state` }]);
  return summarize([{ class: "read_only", message: `${tool} changes nothing` }]);
}
