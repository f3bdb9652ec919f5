import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";
import { makeUserHome, type UserHome } from "../support/user-home";

/**
 * Red team, round two: a connected Claude Code session's `read_only` Bash runs at once,
 * unsandboxed, as the user. Each command below was judged `read_only` with the session directory
 * `home/ada/api`, and real bash 5.2, run there, did what the comment says.
 *
 * 1. A here-doc delimiter with a backslash inside quotes (`<<'a\b'`, `<<"a\b"`): bash's delimiter
 *    keeps the backslash (quote removal leaves it inside single quotes, and inside double quotes
 *    before a letter), `checkHeredocEnd` strips every backslash and quote, and tree-sitter-bash
 *    ends the here-doc at the stripped line. So bash ends the here-doc at the line `a\b` and runs
 *    the lines after it, which the parse holds as here-doc text: any command, without a card.
 * 2. The cd tracking counts a `cd` as certain when its joiner is `&&`, and that joiner comes from
 *    the tree: a `cd` that is the last command of an `if` condition written before a newline
 *    takes the `&&` after `fi`; a `cd … && true` in a `{ … }` written before a newline takes the
 *    `|` after `}` (a pipeline stage, a subshell); and `!` is looked for only in the 64 characters
 *    before the `cd`, as raw text (64 spaces, or a backslash-newline, hide it). In each, the cd
 *    fails or does not last, and the `..` judged from the deeper directory leaves the session
 *    (up to `/proc/self/environ`, the API key).
 * 3. An attached option value after a cluster is checked only when the value, taken after the
 *    first letter or after a run of leading letters, starts with `/`, `~` or holds a `/..`: a
 *    digit flag first (`file -0m…`, `-0` is `--print0`) leaves `m/abs/path` and `0m/abs/path`,
 *    neither of which matches, and `file` prints each line of the "magic file" it cannot parse.
 *
 * Fixed: the delimiter is read with bash's quote removal (`removeQuotes`), a `cd` is certain only
 * at the top level of the command (`SimpleCommand.isTopLevel`, from the tree), and a cluster's
 * leading letters and digits are both taken off.
 */
const SECRET = "TOPSECRET-ada-round-two";
const KEY = "sk-ant-FAKEKEY-for-red-team";

/** Run a program the parse does not list: each creates PWNED or deletes README.md. */
const RUNS_HIDDEN_COMMANDS = [
  "cat <<'a\\b'\na\\b\ntouch PWNED\nab",
  'cat <<"a\\b"\na\\b\ntouch PWNED\nab',
  "cat <<'tru\\e'\ntru\\e\ntouch PWNED\ntrue",
  "ls <<'EO\\F'\nEO\\F\nfind . -delete\nEOF",
];

const READS_THE_SECRET = [
  // 2. cd judged certain though it failed or did not last.
  "if cd nope\nthen true\nfi && cat ../.secret",
  "if cd nope && true\nthen true\nfi && cat ../.secret",
  "{ cd nope && true\n} | cat ../.secret",
  `!${" ".repeat(70)}cd nope && cat ../.secret`,
  "! \\\ncd nope && cat ../.secret",
  // 3. a cluster whose first flag is a digit hides the attached value.
  "file -0m../.secret /dev/null",
  "file -0bm../.secret /dev/null",
  "file -0m@HOME@/.secret /dev/null",
];

const PRINTS_THE_ENVIRONMENT = [
  "if cd a/b/c/d/e/f/g/h\nthen true\nfi && cat ../../../../../../../../proc/self/environ",
];

let user: UserHome;
let cwd: string;

beforeAll(() => {
  user = makeUserHome({ prefix: "rt-round-two-", secret: SECRET, env: { ANTHROPIC_API_KEY: KEY } });
  cwd = user.cwd;
});

beforeEach(() => user.resetProject());

afterAll(() => user.remove());

const resolve = (command: string) => user.resolve(command);
const runInBash = (command: string) => user.runInBash(command);

describe("a connected session's read_only Bash, round two (red team)", () => {
  it.each(RUNS_HIDDEN_COMMANDS)("%j runs a command bash sees and the parse does not", (command) => {
    runInBash(command);
    expect(existsSync(path.join(cwd, "PWNED")) || !existsSync(path.join(cwd, "README.md"))).toBe(
      true,
    );
  });

  it.each(READS_THE_SECRET)("%j prints the secret beside the directory in bash", (command) => {
    expect(runInBash(command)).toContain(SECRET);
  });

  it.each(PRINTS_THE_ENVIRONMENT)("%j prints the API key from the environment", (command) => {
    expect(runInBash(command)).toContain(KEY);
  });

  it.each([...RUNS_HIDDEN_COMMANDS, ...READS_THE_SECRET, ...PRINTS_THE_ENVIRONMENT])(
    "%j is not run at once",
    async (command) => {
      const risk = await classifyConnectorCall("Bash", { command: resolve(command) }, cwd);
      expect(risk.class).toBe("needs_approval");
    },
  );

  it("plain reads inside the directory still run at once; an if is beyond plain", async () => {
    for (const command of [
      "cd ./src && cat ../README.md",
      "cat <<'EOF'\nhello\nEOF",
      "file -b README.md",
    ]) {
      expect((await classifyConnectorCall("Bash", { command }, cwd)).class, command).toBe(
        "read_only",
      );
    }
    const compound = "if test -f README.md\nthen cat README.md\nfi";
    expect((await classifyConnectorCall("Bash", { command: compound }, cwd)).class).toBe(
      "needs_approval",
    );
  });
});
