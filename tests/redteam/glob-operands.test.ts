import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";
import { makeUserHome, type UserHome } from "../support/user-home";

/**
 * Red team, round six: what a glob becomes. A connected session's Bash runs at once, unsandboxed,
 * when the classifier says `read_only` and the command is plain; each command below was, with the
 * session directory `home/ada/api`, and bash 5.2 (zsh 5.9 alike) did what the comment says.
 *
 * 1. grep's first operand is its pattern, and the path check skipped it. A glob there is as many
 *    words as it matches: the first is the pattern, the rest are files grep reads, and `-v` prints
 *    every line of them (`~/.secret`, `/proc/self/environ`).
 * 2. A glob before diff's files can expand to a file named `--to-file=..` (a cloned repository
 *    may hold one), and `diff -rN .ssh --t*` then compares an empty directory with the parent: every
 *    file of the home directory, printed.
 * 3. bash expands `~` in a word shaped like `NAME+=~` or `NAME[0]=~`, which echo prints: the home
 *    directory's path (`~root`, another user's).
 * 4. A glob after `--` was taken for operands, but after an option `--` may be that option's value
 *    (`-x --`, `--random-source --`, `-name --`), and the glob is then still among the options:
 *    `diff -rN -x -- .ssh --t*` reopened 2; `sort --random-source -- --f*` met a file named
 *    `--files0-from=.l` and printed the file `.l` names; `find . -not -name -- -e* sh pwn.sh ';'`
 *    met a file named `-exec` and ran the script.
 *
 * Fixed: a glob in the pattern's place is checked as a path; diff's `--to-file` and `--from-file`
 * are denied, so a glob among its words may be one of them (workspace work); `NAME+=` and
 * `NAME[i]=` words are checked as assignments are; a `--` right after an option ends no options.
 */
const SECRET = "TOPSECRET-ada-round-six";
const KEY = "sk-ant-FAKEKEY-for-red-team";

const READS_OUTSIDE: [command: string, prints: string][] = [
  ["grep -v ~/.*", SECRET],
  ["grep -av /proc/self/[ce]*", KEY],
  ["diff -rN .ssh --t*", SECRET],
  ["diff -rN -x -- .ssh --t*", SECRET],
  ["sort --random-source -- --f*", SECRET],
];

/** A file named `-exec` in the directory, and a script there: find runs it. */
const RUNS_A_PROGRAM = "find . -maxdepth 0 -not -name -- -e* sh pwn.sh ';'";

let user: UserHome;

beforeAll(() => {
  user = makeUserHome({ prefix: "rt-round-six-", secret: SECRET, env: { ANTHROPIC_API_KEY: KEY } });
  // `~/.*` is then `~/.bashrc ~/.secret`: the first the pattern, the second a file.
  writeFileSync(path.join(user.home, ".bashrc"), "");
  mkdirSync(path.join(user.cwd, ".ssh"));
  writeFileSync(path.join(user.cwd, "--to-file=.."), "");
  writeFileSync(path.join(user.cwd, "--files0-from=.l"), "");
  writeFileSync(path.join(user.cwd, ".l"), "../.secret\0");
  writeFileSync(path.join(user.cwd, "-exec"), "");
  writeFileSync(path.join(user.cwd, "pwn.sh"), "touch PWNED\n");
});

beforeEach(() => user.resetProject());

afterAll(() => user.remove());

describe("what a glob becomes (red team)", () => {
  it.each(READS_OUTSIDE)("%j prints what is outside the directory", (command, prints) => {
    expect(user.runInBash(command)).toContain(prints);
  });

  it(`${JSON.stringify(RUNS_A_PROGRAM)} runs a script from the directory`, () => {
    user.runInBash(RUNS_A_PROGRAM);
    expect(existsSync(path.join(user.cwd, "PWNED"))).toBe(true);
  });

  it("echo a+=~ prints the home directory's path", () => {
    expect(user.runInBash("echo a+=~")).toContain(user.home);
  });

  it.each([
    ...READS_OUTSIDE.map(([command]) => command),
    RUNS_A_PROGRAM,
    "echo a+=~",
    "echo a+=~root",
  ])("%j is not run at once", async (command) => {
    const risk = await classifyConnectorCall("Bash", { command }, user.cwd);
    expect(risk.class).not.toBe("read_only");
  });

  it("a glob among grep's files and diff's plain words still read at once", async () => {
    for (const command of [
      "grep -n hello -- *.md",
      "grep -rn 'a.*b' src",
      "diff README.md README.md",
    ]) {
      const risk = await classifyConnectorCall("Bash", { command }, user.cwd);
      expect(risk.class, command).toBe("read_only");
    }
  });
});
