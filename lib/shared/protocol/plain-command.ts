import type { ShellAnalysis } from "./shell-command";

/**
 * A second reading of a bash command, by a lexer of a small subset of bash written here, for the
 * calls that run unsandboxed with nobody asked (a connected session's read-only Bash). The parse
 * the classifier judges comes from tree-sitter-bash, which is not bash: each red-team pass found
 * another spelling the grammar reads one way and bash another (a line starting with a backslash, an
 * escaped tab, a here-doc delimiter, words after a redirection). Here no such spelling is read at
 * all: only plain words (no `$`, backslash, backtick, brace, `!` or `#`), single quotes, double
 * quotes without those, the joiners `&&`, `||`, `|`, `;` and a newline, redirections of a
 * descriptor to `/dev/null` or another descriptor, `<` from a plain word, and here-docs of plain
 * text. A command is plain when this reading succeeds and gives the same simple commands, word for
 * word, as the parse.
 *
 * The session's shell may be zsh (decision 073), so the subset also leaves out what zsh reads
 * otherwise than bash: a word starting with `=` (zsh puts the path of that program on $PATH in its
 * place) and `<` from a file with a `>` right after it (`<1-5>` is one word to zsh, a glob for the
 * numbers 1 to 5, so the `&` after it ends the command).
 */

/** One simple command as the lexer reads it: its words, and how many redirections it has. */
type PlainCommand = { words: string[]; redirects: number };

const PLAIN_UNQUOTED = /[A-Za-z0-9_./:=+,@%^~*?[\]-]/;
const FORBIDDEN_IN_DOUBLE_QUOTES = /[$`\\!]/;
const JOINERS = ["&&", "||", "|", ";"] as const;
/** `2>/dev/null`, `>/dev/null`, `2>&1`, `>&2`, `<file`: the descriptor, the operator, the rest. */
const REDIRECTION = /^(\d?)(>>|>&|<&|>|<)/;

class NotPlain extends Error {}

/** The commands of `source` in the subset, or null when it is not in it. */
export function readPlainCommands(source: string): PlainCommand[] | null {
  try {
    return new PlainLexer(source).read();
  } catch (error) {
    if (error instanceof NotPlain) return null;
    throw error;
  }
}

class PlainLexer {
  private index = 0;
  private readonly commands: PlainCommand[] = [];
  private current: PlainCommand = { words: [], redirects: 0 };
  /** Here-docs opened on the current line, read from the next one on. */
  private pendingHeredocs: { delimiter: string; stripsTabs: boolean; isExpanded: boolean }[] = [];

  constructor(private readonly source: string) {}

  read(): PlainCommand[] {
    while (this.index < this.source.length) {
      const character = this.source[this.index] as string;
      if (character === " " || character === "\t") {
        this.index++;
      } else if (character === "\n") {
        this.index++;
        this.endCommand(true);
        this.readHeredocBodies();
      } else if (this.readJoiner()) {
        continue;
      } else if (this.source.startsWith("<<", this.index)) {
        this.readHeredocStart();
      } else if (REDIRECTION.test(this.source.slice(this.index, this.index + 3))) {
        this.readRedirection();
      } else {
        this.current.words.push(this.readWord());
      }
    }
    if (this.pendingHeredocs.length > 0) throw new NotPlain();
    this.endCommand(true);
    return this.commands;
  }

  private endCommand(isOptional: boolean): void {
    if (this.current.words.length === 0) {
      if (this.current.redirects > 0 || !isOptional) throw new NotPlain();
      return;
    }
    this.commands.push(this.current);
    this.current = { words: [], redirects: 0 };
  }

  private readJoiner(): boolean {
    const joiner = JOINERS.find((candidate) => this.source.startsWith(candidate, this.index));
    if (!joiner) return false;
    this.index += joiner.length;
    // `;` may end the text; the others need a command after them, as they need one before.
    this.endCommand(false);
    return true;
  }

  private readRedirection(): void {
    const match = REDIRECTION.exec(
      this.source.slice(this.index, this.index + 3),
    ) as RegExpExecArray;
    this.index += match[0].length;
    while (this.source[this.index] === " ") this.index++;
    const operator = match[2] as string;
    const target = this.readWord();
    if (this.source[this.index] === ">" || this.source[this.index] === "<") throw new NotPlain();
    const isDescriptor = /^(\d|-)$/.test(target);
    const isPlainTarget =
      operator === ">&" || operator === "<&"
        ? isDescriptor
        : operator === "<"
          ? !isDescriptor
          : target === "/dev/null";
    if (!isPlainTarget) throw new NotPlain();
    this.current.redirects++;
  }

  private readHeredocStart(): void {
    this.index += 2;
    const stripsTabs = this.source[this.index] === "-";
    if (stripsTabs) this.index++;
    while (this.source[this.index] === " ") this.index++;
    // Any quote in the delimiter stops bash expanding the text; only a leading ' is read as one.
    const isExpanded = this.source[this.index] !== "'";
    const delimiter = this.readWord();
    this.pendingHeredocs.push({ delimiter, stripsTabs, isExpanded });
    this.current.redirects++;
  }

  /** Each pending here-doc's lines, up to a line that is its delimiter exactly. */
  private readHeredocBodies(): void {
    for (const { delimiter, stripsTabs, isExpanded } of this.pendingHeredocs) {
      for (;;) {
        if (this.index >= this.source.length) throw new NotPlain();
        const end = this.source.indexOf("\n", this.index);
        const line = this.source.slice(this.index, end < 0 ? this.source.length : end);
        this.index = end < 0 ? this.source.length : end + 1;
        if ((stripsTabs ? line.replace(/^\t+/, "") : line) === delimiter) break;
        // Unquoted, bash expands `$`, backticks and backslashes in the text.
        if (isExpanded && /[$`\\]/.test(line)) throw new NotPlain();
      }
    }
    this.pendingHeredocs = [];
  }

  private readWord(): string {
    let value = "";
    let isEmpty = true;
    while (this.index < this.source.length) {
      const character = this.source[this.index] as string;
      if (character === "'") {
        const end = this.source.indexOf("'", this.index + 1);
        if (end < 0) throw new NotPlain();
        value += this.source.slice(this.index + 1, end);
        this.index = end + 1;
      } else if (character === '"') {
        const end = this.source.indexOf('"', this.index + 1);
        if (end < 0) throw new NotPlain();
        const inner = this.source.slice(this.index + 1, end);
        if (FORBIDDEN_IN_DOUBLE_QUOTES.test(inner)) throw new NotPlain();
        value += inner;
        this.index = end + 1;
      } else if (PLAIN_UNQUOTED.test(character)) {
        value += character;
        this.index++;
      } else if (" \t\n;&|<>".includes(character)) {
        break;
      } else {
        throw new NotPlain();
      }
      isEmpty = false;
    }
    if (isEmpty) throw new NotPlain();
    // A lone `=` (`test a = b`) is itself in both shells.
    if (value.startsWith("=") && value.length > 1) throw new NotPlain();
    return value;
  }
}

/**
 * Is the command plain, and does the parse hold the same simple commands, word for word and with
 * as many redirections each? A command the two read differently is not run without a card.
 */
export function isPlainAsParsed(analysis: ShellAnalysis): boolean {
  const plain = readPlainCommands(analysis.source);
  if (plain === null || plain.length !== analysis.commands.length) return false;
  return analysis.commands.every((command, index) => {
    const read = plain[index] as PlainCommand;
    const words = [command.name, ...command.args].map((word) => word?.value ?? null);
    return (
      command.assignments.length === 0 &&
      command.redirects.length === read.redirects &&
      words.length === read.words.length &&
      words.every((word, position) => word === read.words[position])
    );
  });
}
