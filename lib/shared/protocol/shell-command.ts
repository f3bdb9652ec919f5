import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { Language, Parser, type Node } from "web-tree-sitter";
import { MAX_COMMAND_LENGTH } from "./tool-args";

/**
 * A bash command as a syntax tree sees it, reduced to what the risk classifier and the approval
 * card need. Pure data (JSON-serialisable) so the server can store it with a tool_approval request
 * and the console can render exactly what the gate judged.
 */

/** Half-open range of UTF-16 code units in the source, like String.prototype.slice. */
export type ShellSpan = { start: number; end: number };

/** One word as written and, when it is fully literal, its value after quote removal. */
export type ShellWord = {
  text: string;
  /** null when the word is built by an expansion, a substitution or brace expansion. */
  value: string | null;
  /** Unquoted glob characters: the shell may replace the word with file names. */
  isGlob: boolean;
  span: ShellSpan;
};

export type ShellRedirect = {
  kind: "file" | "heredoc" | "herestring";
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. */
  operator: string;
  descriptor: string | null;
  /** The file (or, for a here-string, the string); null for a here-doc. */
  target: ShellWord | null;
  span: ShellSpan;
};

export type ShellAssignment = { name: string; value: ShellWord | null; span: ShellSpan };

/** How a command is joined to the one after it ("newline" when only a line break separates them). */
export type ShellJoiner = "|" | "|&" | ";" | "&&" | "||" | "&" | "newline" | null;

export type SimpleCommand = {
  /** null for a bare assignment (`x=1`) or a redirection with no command (`> file`). */
  name: ShellWord | null;
  args: ShellWord[];
  assignments: ShellAssignment[];
  redirects: ShellRedirect[];
  joiner: ShellJoiner;
  /** Reads the output of an earlier pipeline stage (`a | b` → true for b). */
  isPiped: boolean;
  isBackground: boolean;
  /** Nested inside $(…), `…`, <(…) or >(…): its output becomes part of another command. */
  isInSubstitution: boolean;
  isInSubshell: boolean;
  /**
   * In the command's own statement list or its `&&`/`||` chains, outside any if, loop, case,
   * `{ }` group, subshell, pipeline, `!` or function: it runs in this shell when its chain gets to
   * it, so a `cd` here that succeeds is where what follows it in the chain runs.
   */
  isTopLevel: boolean;
  /** The function whose body holds it; it runs only when that function is called. */
  inFunction: string | null;
  span: ShellSpan;
};

export type ShellConstruct =
  | { kind: "command_substitution" | "process_substitution" | "backticks"; span: ShellSpan }
  | { kind: "function_definition"; name: string; span: ShellSpan }
  /** `${x:=…}`, `${x=…}`: a word that sets a variable. */
  | { kind: "assigning_expansion"; name: string; span: ShellSpan }
  /**
   * `for x in …` and `select x in …` set x for the commands of the loop, as an assignment before
   * a command would: `for HOME in docs; do git status; done` runs git with HOME=docs.
   */
  | { kind: "loop_variable"; name: string; span: ShellSpan }
  /**
   * `${x@P}` expands a value as a prompt, which runs the `$(…)` in it; `${!x}` reads the variable
   * a value names, evaluating its subscript. Either runs code that is only text until then, and
   * the text can be built at run time without `$(` ever being written (`${d:=$}${d}(…)`).
   * Arithmetic (`$((…))`, `((…))`, an array subscript, a substring's offset) does the same when
   * it names a variable: its value is evaluated as an expression, subscripts and all.
   */
  | { kind: "prompt_expansion" | "indirect_expansion"; span: ShellSpan }
  /**
   * A `case` statement's subject: the word it matches. A comment is text no command holds: where
   * the grammar and bash split words otherwise, it is where the rest of a line hides.
   */
  | {
      kind: "subshell" | "arithmetic" | "declaration" | "test" | "case" | "comment";
      span: ShellSpan;
    };

/**
 * Text that can run code where the grammar may not see it: a backtick in an unquoted here-doc
 * body or inside `${x:-…}`, and quoted text evaluated again (a `test -v` subscript, eval).
 */
export const RAW_SUBSTITUTION = /`|\$\((?!\()|[<>]\(/;
export const RAW_EVALUATION = /@P(?!\w)|\$\{!/;

/** Does the construct run code hidden in a value, code no word of the command shows? */
export function runsHiddenCode(construct: ShellConstruct, source: string): boolean {
  if (construct.kind === "prompt_expansion" || construct.kind === "indirect_expansion") return true;
  if (construct.kind !== "arithmetic") return false;
  const text = source.slice(construct.span.start, construct.span.end);
  return /[A-Za-z_]/.test(text.replace(/^\$?\(\(|\)\)$/g, ""));
}

export type ShellAnalysis = {
  source: string;
  isParseable: boolean;
  /** Why it cannot be trusted as parsed (syntax errors, NUL, joined lines…); empty when it can. */
  problems: { message: string; span: ShellSpan }[];
  /** Every simple command, in source order, including those in substitutions and functions. */
  commands: SimpleCommand[];
  constructs: ShellConstruct[];
};

/** Nesting deeper than this is reported rather than walked (a stack overflow would be a 500). */
const MAX_DEPTH = 200;

/**
 * Longer commands are not parsed, only reported: the parser's error recovery grows with the
 * input, and on 40,000 characters of `a|a|…|` it ran out of memory and aborted, which leaves its
 * WebAssembly module dead for the process (every later parse throws, every agent's bash with it;
 * red team). It is what the workers' bash takes, and a card shows the whole text anyway.
 */
const MAX_PARSED_COMMAND_LENGTH = MAX_COMMAND_LENGTH;

const PARSER_KEY = Symbol.for("handshake.shellParser");
type ParserHolder = { [PARSER_KEY]?: Promise<Parser> };

let ready: Parser | null = null;

// Joined at run time so that no bundler mistakes the grammar for a module of the build: Turbopack
// would otherwise try to compile the .wasm as a WebAssembly import and fail the production build.
const GRAMMAR = ["tree-sitter-bash", "tree-sitter-bash.wasm"].join("/");

/**
 * Resolved from this module at run time (tsx, vitest, the worker); a bundler may rewrite
 * import.meta.url, so the project's node_modules under the working directory (where server.ts
 * runs) is the fallback.
 */
function locateGrammar(): string {
  // turbopackIgnore: a path known only at run time is no module of the build, and the file
  // tracer would otherwise warn on every build and trace the whole project for it.
  try {
    return createRequire(import.meta.url).resolve(/* turbopackIgnore: true */ GRAMMAR);
  } catch {
    return createRequire(path.join(process.cwd(), "package.json")).resolve(
      /* turbopackIgnore: true */ GRAMMAR,
    );
  }
}

async function createParser(): Promise<Parser> {
  await Parser.init();
  const parser = new Parser();
  const grammar = locateGrammar();
  parser.setLanguage(
    await Language.load(new Uint8Array(await readFile(/* turbopackIgnore: true */ grammar))),
  );
  return parser;
}

/** Loads the bash grammar once per process; later calls resolve at once. */
export async function loadShellParser(): Promise<void> {
  if (ready) return;
  const holder = globalThis as ParserHolder;
  holder[PARSER_KEY] ??= createParser();
  try {
    ready = await holder[PARSER_KEY];
  } catch (error) {
    delete holder[PARSER_KEY];
    throw error;
  }
}

function spanOf(node: Node): ShellSpan {
  return { start: node.startIndex, end: node.endIndex };
}

const GLOB_CHARACTERS = /[*?[]/;

/**
 * Could bash expand braces in this unquoted text? A `{`, then `,` or `..`, then `}`, whatever
 * braces stand between (`{~/.ssh/id_rsa,{}}` expands): found in one pass, so a long word of
 * braces costs its length, not its square.
 */
function hasBraceExpansion(unquoted: string): boolean {
  const open = unquoted.indexOf("{");
  if (open < 0) return false;
  const comma = unquoted.indexOf(",", open);
  const range = unquoted.indexOf("..", open);
  const separator = comma < 0 ? range : range < 0 ? comma : Math.min(comma, range);
  return separator >= 0 && unquoted.indexOf("}", separator) >= 0;
}

/** Removes the backslashes bash removes in an unquoted word. */
function unescapeUnquoted(text: string): string {
  return text.replace(/\\\r?\n/g, "").replace(/\\(.)/gs, "$1");
}

/** Inside double quotes a backslash only escapes $ ` " \ and a newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\\r?\n/g, "").replace(/\\([$`"\\])/g, "$1");
}

/** `unquoted` is the text outside quotes with escapes removed: where globs and braces act. */
type Literal = { value: string | null; isGlob: boolean; unquoted: string };

function resolveLiteral(node: Node): Literal {
  switch (node.type) {
    case "command_name":
      if (node.namedChildCount === 1) return resolveLiteral(node.namedChildren[0] as Node);
      return { value: null, isGlob: false, unquoted: node.text };
    case "word":
    case "number": {
      if (node.namedChildCount > 0) return { value: null, isGlob: false, unquoted: node.text };
      const unquoted = node.text.replace(/\\./gs, "");
      return {
        value: unescapeUnquoted(node.text),
        isGlob: GLOB_CHARACTERS.test(unquoted),
        unquoted,
      };
    }
    case "raw_string":
      return { value: node.text.slice(1, -1), isGlob: false, unquoted: "" };
    case "string": {
      let value = "";
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type !== "string_content") return { value: null, isGlob: false, unquoted: "" };
        value += unescapeDoubleQuoted(child.text);
      }
      return { value, isGlob: false, unquoted: "" };
    }
    case "concatenation": {
      let value: string | null = "";
      let isGlob = false;
      let unquoted = "";
      for (const child of node.children) {
        if (!child) continue;
        const part = resolveLiteral(child);
        value = value === null || part.value === null ? null : value + part.value;
        isGlob ||= part.isGlob;
        unquoted += part.unquoted;
      }
      return { value, isGlob, unquoted };
    }
    default:
      // Expansions, substitutions, $'…', $"…", brace expressions: only the shell knows the value.
      return { value: null, isGlob: false, unquoted: node.text };
  }
}

function toWord(node: Node): ShellWord {
  const literal = resolveLiteral(node);
  return {
    text: node.text,
    value: hasBraceExpansion(literal.unquoted) ? null : literal.value,
    isGlob: literal.isGlob,
    span: spanOf(node),
  };
}

const JOINERS: ReadonlySet<string> = new Set(["|", "|&", ";", "&&", "||", "&", ";;"]);

const SCOPE_BOUNDARIES: ReadonlySet<string> = new Set([
  "program",
  "command_substitution",
  "process_substitution",
  "function_definition",
]);

/**
 * The operator a sibling makes of the node before it: a joiner, "newline" for a statement on the
 * next line, or undefined when the node ends its parent's list (a closing `}` or `)`, a comment,
 * nothing), so the parent's own joiner applies: in `(a; b) | c` b is joined to c by a pipe, since
 * b's output is the subshell's.
 */
function joinerBefore(sibling: Node | null | undefined): ShellJoiner | undefined {
  if (!sibling) return undefined;
  if (!sibling.isNamed && JOINERS.has(sibling.type)) {
    return sibling.type === ";;" ? ";" : (sibling.type as ShellJoiner);
  }
  return sibling.isNamed && sibling.type !== "comment" ? "newline" : undefined;
}

/**
 * The context of `child`, under a node walked with `parent`. The joiner and the pipe are worked
 * out on the way down, from the siblings the walk already holds: looked up the tree from each
 * statement, through web-tree-sitter's `parent` (found by searching down from the root) and
 * `namedChildren` (built whole on each read), they cost a pipeline of k stages k² steps, and a
 * command of 10,000 characters held the node for seconds.
 */
function enter(
  child: Node,
  nextSibling: Node | null | undefined,
  isLaterStage: boolean,
  parent: WalkContext,
): WalkContext {
  if (SCOPE_BOUNDARIES.has(child.type)) return { ...parent, joiner: null, isPiped: false };
  return {
    ...parent,
    joiner: joinerBefore(nextSibling) ?? parent.joiner,
    isPiped: parent.isPiped || isLaterStage,
  };
}

/**
 * One redirect node's redirects, and the words the grammar put inside it. tree-sitter-bash takes
 * every word written after a redirection into it (`cat 2>/dev/null ~/.ssh/id_rsa` is a redirect
 * to `/dev/null ~/.ssh/id_rsa`), where bash reads them as the command's arguments; so does a
 * here-doc's start (`find <<EOF . -delete`). A here-doc carries the redirects written after its
 * delimiter inside it.
 */
function parseRedirects(node: Node): { redirects: ShellRedirect[]; words: ShellWord[] } {
  const descriptor = node.childForFieldName("descriptor")?.text ?? null;
  const operator = node.children.find((child) => child && !child.isNamed)?.type;
  const parts = node.namedChildren.filter(
    (child): child is Node => child !== null && child.type !== "file_descriptor",
  );
  if (node.type === "heredoc_redirect") {
    const nested = parts.filter((child) => child.type.endsWith("_redirect")).map(parseRedirects);
    const heredoc: ShellRedirect = {
      kind: "heredoc",
      operator: operator ?? "<<",
      descriptor,
      target: null,
      span: spanOf(node),
    };
    // The rest of the line's statement (`| grep x`, `&& ls`) is walked as its own; anything else
    // there is a word of the command, known or not.
    const words = parts
      .filter(
        (child) =>
          !HEREDOC_PARTS.has(child.type) &&
          !NOT_WORDS.has(child.type) &&
          !child.type.endsWith("_redirect"),
      )
      .map(toWord);
    return {
      redirects: [heredoc, ...nested.flatMap((inner) => inner.redirects)],
      words: [...words, ...nested.flatMap((inner) => inner.words)],
    };
  }
  // `>&-` and `<&-` close a descriptor: the word after one is the command's, not a target.
  const isClosing = operator === ">&-" || operator === "<&-";
  const target = isClosing ? undefined : parts[0];
  const words = isClosing ? parts : parts.slice(1);
  return {
    redirects: [
      {
        kind: node.type === "herestring_redirect" ? "herestring" : "file",
        operator: node.type === "herestring_redirect" ? "<<<" : (operator ?? ">"),
        descriptor,
        target: target ? toWord(target) : null,
        span: spanOf(node),
      },
    ],
    words: words.map(toWord),
  };
}

/** What follows a here-doc's start on its line and is not a word of its command. */
const NOT_WORDS: ReadonlySet<string> = new Set([
  "c_style_for_statement",
  "case_statement",
  "command",
  "comment",
  "compound_statement",
  "declaration_command",
  "for_statement",
  "function_definition",
  "if_statement",
  "list",
  "negated_command",
  "pipeline",
  "redirected_statement",
  "subshell",
  "test_command",
  "unset_command",
  "variable_assignment",
  "variable_assignments",
  "while_statement",
  "ERROR",
]);

const HEREDOC_PARTS: ReadonlySet<string> = new Set([
  "heredoc_start",
  "heredoc_body",
  "heredoc_end",
]);

/**
 * A here-doc delimiter as bash reads it: quotes removed, a backslash kept inside single quotes and,
 * inside double quotes, before anything but `$`, a backtick, `"` and a backslash (`<<'a\b'`
 * ends at the line `a\b`, where the grammar ended it at `ab`).
 */
function removeQuotes(text: string): string {
  let value = "";
  let quote: "'" | '"' | null = null;
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (quote === "'") {
      if (character === "'") quote = null;
      else value += character;
    } else if (character === quote) {
      quote = null;
    } else if (character === "\\") {
      const escaped = text[index + 1] ?? "";
      const isEscape = quote === null || /[$`"\\]/.test(escaped);
      value += isEscape ? escaped : `\\${escaped}`;
      index++;
    } else if (quote === null && (character === "'" || character === '"')) {
      quote = character;
    } else {
      value += character;
    }
  }
  return value;
}

/** The nodes between the program and a command that leave it at the top level (isTopLevel). */
const TOP_LEVEL_NODES: ReadonlySet<string> = new Set([
  "program",
  "list",
  "redirected_statement",
  "command",
]);

class DepthExceeded extends Error {}

/**
 * `{name}>&2`, `{name}<file`: bash and zsh open a new descriptor and store its number in `name`,
 * in this shell, and zsh does with blanks before the redirection too. The grammar reads `{name}`
 * as a word of the command: `true {PATH}>&2; ls` ran `./10/ls`.
 */
const DESCRIPTOR_VARIABLE = /^\{([A-Za-z_]\w*)(?:\[(.*)\])?\}$/s;
const BLANKS = /(?:[ \t]|\\\r?\n)*/y;

type WalkContext = {
  isInSubstitution: boolean;
  isInSubshell: boolean;
  isTopLevel: boolean;
  inFunction: string | null;
  depth: number;
  /** The operator after the node walked, or after the list it ends (null: none, in its scope). */
  joiner: ShellJoiner;
  /** Whether the node walked is in a later stage of a pipeline, in its scope. */
  isPiped: boolean;
};

/** The syntax of the whole command: every simple command and construct, with problems found. */
class ShellWalker {
  constructor(private readonly source: string) {}

  readonly problems: ShellAnalysis["problems"] = [];
  readonly commands: SimpleCommand[] = [];
  readonly constructs: ShellConstruct[] = [];

  walk(node: Node, context: WalkContext): void {
    if (context.depth > MAX_DEPTH) throw new DepthExceeded();
    const next = {
      ...context,
      depth: context.depth + 1,
      isTopLevel: context.isTopLevel && TOP_LEVEL_NODES.has(node.type),
    };
    if (node.isMissing) {
      this.problems.push({ message: `missing '${node.type}'`, span: spanOf(node) });
      return;
    }
    switch (node.type) {
      case "ERROR":
        this.problems.push({ message: "syntax error", span: spanOf(node) });
        break;
      case "command":
        this.collectCommand(node, node, { redirects: [], words: [] }, next);
        return;
      case "redirected_statement": {
        const body = node.childForFieldName("body");
        const redirectNodes = node.namedChildren.filter(
          (child): child is Node => child !== null && child.id !== body?.id,
        );
        const parsed = redirectNodes.map(parseRedirects);
        const redirects = parsed.flatMap((redirect) => redirect.redirects);
        const words = parsed.flatMap((redirect) => redirect.words);
        if (body?.type === "command") {
          this.collectCommand(body, node, { redirects, words }, next);
        } else {
          // A redirect on a compound statement (`{ …; } > f`) or on nothing at all (`> f`).
          this.commands.push(this.describe(node, context, { redirects }));
          if (body) this.walk(body, enter(body, body.nextSibling, false, next));
          for (const word of words) {
            this.problems.push({
              message: "a word after a redirection has no command",
              span: word.span,
            });
          }
        }
        for (const redirect of redirectNodes) this.walk(redirect, next);
        return;
      }
      case "variable_assignment":
      case "variable_assignments": {
        const parts =
          node.type === "variable_assignment"
            ? [node]
            : node.namedChildren.filter((child): child is Node => child !== null);
        this.commands.push(this.describe(node, context, { assignments: parts.map(toAssignment) }));
        this.walkChildren(node, next);
        return;
      }
      case "command_substitution":
        this.constructs.push({
          kind: node.text.startsWith("`") ? "backticks" : "command_substitution",
          span: spanOf(node),
        });
        this.walkChildren(node, { ...next, isInSubstitution: true });
        return;
      case "process_substitution":
        this.constructs.push({ kind: "process_substitution", span: spanOf(node) });
        this.walkChildren(node, { ...next, isInSubstitution: true });
        return;
      case "function_definition": {
        const name = node.childForFieldName("name")?.text ?? "";
        this.constructs.push({ kind: "function_definition", name, span: spanOf(node) });
        const body = node.childForFieldName("body");
        if (body)
          this.walk(body, enter(body, body.nextSibling, false, { ...next, inFunction: name }));
        return;
      }
      case "subshell":
        this.constructs.push({ kind: "subshell", span: spanOf(node) });
        this.walkChildren(node, { ...next, isInSubshell: true });
        return;
      case "arithmetic_expansion":
      case "c_style_for_statement":
        this.constructs.push({ kind: "arithmetic", span: spanOf(node) });
        break;
      case "compound_statement":
        if (node.child(0)?.type === "((") {
          this.constructs.push({ kind: "arithmetic", span: spanOf(node) });
        }
        break;
      case "declaration_command":
      case "unset_command":
        this.constructs.push({ kind: "declaration", span: spanOf(node) });
        this.collectDeclaration(node, next);
        return;
      case "test_command":
        this.constructs.push({ kind: "test", span: spanOf(node) });
        break;
      case "heredoc_redirect":
        this.checkHeredocEnd(node);
        break;
      case "for_statement": {
        const variable = node.childForFieldName("variable");
        if (variable) {
          // The variable with its list: the words it takes are on no command's line.
          const last = node.childrenForFieldName("value").at(-1) ?? variable;
          this.constructs.push({
            kind: "loop_variable",
            name: variable.text,
            span: { start: variable.startIndex, end: last.endIndex },
          });
        }
        break;
      }
      case "case_statement": {
        const subject = node.childForFieldName("value");
        if (subject) this.constructs.push({ kind: "case", span: spanOf(subject) });
        break;
      }
      case "expansion":
        this.collectExpansion(node);
        break;
      case "comment":
        this.constructs.push({ kind: "comment", span: spanOf(node) });
        break;
      default:
        break;
    }
    this.walkChildren(node, next);
  }

  /**
   * Bash ends a here-doc at the first line that is its delimiter exactly (after tabs, for `<<-`),
   * or at the end of the input. The grammar may end it elsewhere: it read `cat <<EOF; find . -delete`
   * as a delimiter `EOF;` with `find . -delete` as words, and a later line `EOF ` as the end.
   */
  private checkHeredocEnd(node: Node): void {
    const parts = node.children.filter((child): child is Node => child !== null);
    const start = parts.find((child) => child.type === "heredoc_start");
    const end = parts.find((child) => child.type === "heredoc_end");
    if (!start) return;
    const delimiter = removeQuotes(start.text);
    const indent = parts.some((child) => child.type === "<<-") ? /^\t*$/ : /^$/;
    const lineStart = end ? this.source.lastIndexOf("\n", end.startIndex - 1) + 1 : 0;
    const isExact =
      end !== undefined &&
      end.text === delimiter &&
      indent.test(this.source.slice(lineStart, end.startIndex)) &&
      (end.endIndex === this.source.length || this.source[end.endIndex] === "\n");
    if (!isExact) {
      this.problems.push({
        message: "a here-doc does not end at a line that is its delimiter",
        span: spanOf(node),
      });
    }
  }

  /** Makes each `{name}` word written before a redirection the assignment of `name` it is. */
  assignDescriptorVariables(): void {
    const redirectStarts = new Set(
      this.commands.flatMap((command) => command.redirects.map((redirect) => redirect.span.start)),
    );
    for (const command of this.commands) {
      const assigned = command.args.filter((word) => {
        if (!DESCRIPTOR_VARIABLE.test(word.text)) return false;
        BLANKS.lastIndex = word.span.end;
        const blanks = BLANKS.exec(this.source)?.[0].length ?? 0;
        return redirectStarts.has(word.span.end + blanks);
      });
      if (assigned.length === 0) continue;
      command.args = command.args.filter((word) => !assigned.includes(word));
      for (const word of assigned) {
        command.assignments.push({ name: word.text.slice(1, -1), value: null, span: word.span });
        // An indexed array's subscript is arithmetic (`{a[i]}>&2`), as it is anywhere else.
        const subscript = DESCRIPTOR_VARIABLE.exec(word.text)?.[2];
        if (subscript !== undefined) {
          const end = word.span.end - 2;
          this.pushArithmetic({ start: end - subscript.length, end });
        }
      }
    }
  }

  /** What a `${…}` does beyond giving a value; its nested words are walked as any others. */
  private collectExpansion(node: Node): void {
    const parts = node.children.filter((child): child is Node => child !== null);
    const operatorAt = parts.findIndex((child, index) => index > 0 && !child.isNamed);
    const operator = parts[operatorAt];
    if (parts[1]?.type === "!") {
      this.constructs.push({ kind: "indirect_expansion", span: spanOf(node) });
    } else if (operator?.type === "@" && parts[operatorAt + 1]?.type === "P") {
      this.constructs.push({ kind: "prompt_expansion", span: spanOf(node) });
    } else if (operator?.type === ":=" || operator?.type === "=") {
      const name = parts.find((child) => child.type === "variable_name")?.text ?? "";
      this.constructs.push({ kind: "assigning_expansion", name, span: spanOf(node) });
    } else if (operator?.type === ":") {
      // A substring's offset and length are arithmetic.
      const operands = parts.slice(operatorAt + 1, -1);
      const first = operands[0];
      const last = operands.at(-1);
      if (first && last) this.pushArithmetic({ start: first.startIndex, end: last.endIndex });
    }
    const subscript = parts.find((child) => child.type === "subscript");
    const index = subscript?.childForFieldName("index");
    // An indexed array's subscript is arithmetic; `@` and `*` are all of its elements.
    if (index && index.text !== "@" && index.text !== "*") this.pushArithmetic(spanOf(index));
  }

  /** Arithmetic on numbers alone is left out: it evaluates nothing but itself. */
  private pushArithmetic(span: ShellSpan): void {
    if (/^[\d\s:+-]*$/.test(this.source.slice(span.start, span.end))) return;
    this.constructs.push({ kind: "arithmetic", span });
  }

  private walkChildren(node: Node, context: WalkContext): void {
    const children = node.children;
    let isLaterStage = false;
    for (const [index, child] of children.entries()) {
      if (!child) continue;
      this.walk(child, enter(child, children[index + 1], isLaterStage, context));
      // A pipeline's first named child is its first stage; every later one reads a pipe.
      if (node.type === "pipeline" && child.isNamed) isLaterStage = true;
    }
  }

  /** Assignments inside a command belong to it; only their values may hide substitutions. */
  private walkParts(node: Node, context: WalkContext): void {
    const children = node.children;
    for (const [index, child] of children.entries()) {
      if (!child) continue;
      const childContext = enter(child, children[index + 1], false, context);
      if (child.type === "variable_assignment") this.walkChildren(child, childContext);
      else this.walk(child, childContext);
    }
  }

  private describe(
    statement: Node,
    context: WalkContext,
    parts: Partial<Pick<SimpleCommand, "name" | "args" | "assignments" | "redirects">>,
  ): SimpleCommand {
    const { joiner } = context;
    return {
      name: parts.name ?? null,
      args: parts.args ?? [],
      assignments: parts.assignments ?? [],
      redirects: parts.redirects ?? [],
      joiner,
      isPiped: context.isPiped,
      isBackground: joiner === "&",
      isInSubstitution: context.isInSubstitution,
      isInSubshell: context.isInSubshell,
      isTopLevel: context.isTopLevel,
      inFunction: context.inFunction,
      span: spanOf(statement),
    };
  }

  /** `outer`: the redirects written after the command, and the words the grammar put in them. */
  private collectCommand(
    node: Node,
    statement: Node,
    outer: { redirects: ShellRedirect[]; words: ShellWord[] },
    context: WalkContext,
  ): void {
    const nameNode = node.childForFieldName("name");
    const args: ShellWord[] = [...outer.words];
    const assignments: ShellAssignment[] = [];
    const redirects = [...outer.redirects];
    for (const child of node.namedChildren) {
      if (!child || child.id === nameNode?.id) continue;
      if (child.type === "variable_assignment") assignments.push(toAssignment(child));
      else if (child.type.endsWith("_redirect")) {
        const parsed = parseRedirects(child);
        redirects.push(...parsed.redirects);
        args.push(...parsed.words);
      } else args.push(toWord(child));
    }
    args.sort((a, b) => a.span.start - b.span.start);
    const name = nameNode ? toWord(nameNode) : null;
    this.commands.push(this.describe(statement, context, { name, args, assignments, redirects }));
    this.walkParts(node, context);
  }

  private collectDeclaration(node: Node, context: WalkContext): void {
    const keyword = node.child(0);
    const args: ShellWord[] = [];
    const assignments: ShellAssignment[] = [];
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "variable_assignment") assignments.push(toAssignment(child));
      else args.push(toWord(child));
    }
    const name = keyword
      ? { text: keyword.text, value: keyword.text, isGlob: false, span: spanOf(keyword) }
      : null;
    this.commands.push(this.describe(node, context, { name, args, assignments }));
    this.walkParts(node, context);
  }
}

function toAssignment(node: Node): ShellAssignment {
  const value = node.childForFieldName("value");
  return {
    name: node.childForFieldName("name")?.text ?? "",
    value: value ? toWord(value) : null,
    span: spanOf(node),
  };
}

/** Problems bash and the grammar would disagree on, found in the raw text. */
function findTextProblems(source: string): ShellAnalysis["problems"] {
  const problems: ShellAnalysis["problems"] = [];
  const nul = source.indexOf("\0");
  if (nul >= 0) {
    problems.push({ message: "contains a NUL character", span: { start: nul, end: nul + 1 } });
  }
  // bash deletes backslash-newline before splitting words (`gi\⏎t push` is `git push`); the
  // grammar reads it as a space, which would hide the real command name.
  for (const match of source.matchAll(/\S\\\r?\n(?=\S)/g)) {
    problems.push({
      message: "a backslash-newline joins two words",
      span: { start: match.index + 1, end: match.index + match[0].length },
    });
  }
  // A line that starts with a backslash (`ls⏎\find . -delete`, a here-doc line of `\` alone): the
  // grammar joins it to the line before, as arguments or as here-doc text, where bash runs it.
  for (const match of source.matchAll(/\n[ \t]*\\/g)) {
    problems.push({
      message: "a line starts with a backslash",
      span: { start: match.index + match[0].length - 1, end: match.index + match[0].length },
    });
  }
  // bash and zsh read `\␣` and `\⇥` as a word, the blank escaped; the grammar drops the two and
  // reads a `#` after them as a comment: `ls \ #; cat ~/.ssh/id_rsa` was `ls` alone. Other white
  // space it skips (a form feed, a vertical tab) is a word character to bash.
  for (const match of source.matchAll(/\\[^\S\n]/g)) {
    problems.push({
      message: "a backslash before white space",
      span: { start: match.index, end: match.index + 2 },
    });
  }
  return problems;
}

/** The parse of one bash command. Requires loadShellParser() to have resolved. */
export function analyzeShellCommand(source: string): ShellAnalysis {
  if (!ready) throw new Error("the shell parser is not loaded: await loadShellParser() first");
  const walker = new ShellWalker(source);
  walker.problems.push(...findTextProblems(source));
  const isTooLong = source.length > MAX_PARSED_COMMAND_LENGTH;
  const tree = isTooLong ? null : ready.parse(source);
  if (!tree) {
    walker.problems.push({
      message: isTooLong
        ? `longer than ${MAX_PARSED_COMMAND_LENGTH} characters, so not parsed`
        : "the parser gave no tree",
      span: { start: 0, end: source.length },
    });
  } else {
    try {
      walker.walk(tree.rootNode, {
        isInSubstitution: false,
        isInSubshell: false,
        isTopLevel: true,
        inFunction: null,
        depth: 0,
        joiner: null,
        isPiped: false,
      });
      walker.assignDescriptorVariables();
    } catch (error) {
      if (!(error instanceof DepthExceeded)) throw error;
      walker.problems.push({
        message: `nested more than ${MAX_DEPTH} levels deep`,
        span: { start: 0, end: source.length },
      });
    } finally {
      tree.delete();
    }
  }
  const commands = [...walker.commands].sort((a, b) => a.span.start - b.span.start);
  return {
    source,
    isParseable: walker.problems.length === 0,
    problems: walker.problems,
    commands,
    constructs: walker.constructs,
  };
}
