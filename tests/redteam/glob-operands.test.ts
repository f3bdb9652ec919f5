import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
 *    may hold one), and `diff -rN .ssh *` then compares an empty directory with the parent: every
 *    file of the home directory, printed.
 * 3. bash expands `~` in a word shaped like `NAME+=~` or `NAME[0]=~`, which echo prints: the home
 *    directory's path (`~root`, another user's).
 *
 * Fixed: a glob in the pattern's place is checked as a path; diff's `--to-file` and `--from-file`
 * are denied, so a glob among its words may be one of them (workspace work); `NAME+=` and
 * `NAME[i]=` words are checked as assignments are.
 */
const SECRET = "TOPSECRET-ada-round-six";
const KEY = "sk-ant-FAKEKEY-for-red-team";

const READS_OUTSIDE: [command: string, prints: string][] = [
  ["grep -v ~/.*", SECRET],
  ["grep -av /proc/self/[ce]*", KEY],
  ["diff -rN .ssh *", SECRET],
];

let user: UserHome;

beforeAll(() => {
  user = makeUserHome({ prefix: "rt-round-six-", secret: SECRET, env: { ANTHROPIC_API_KEY: KEY } });
  // `~/.*` is then `~/.bashrc ~/.secret`: the first the pattern, the second a file.
  writeFileSync(path.join(user.home, ".bashrc"), "");
  mkdirSync(path.join(user.cwd, ".ssh"));
  writeFileSync(path.join(user.cwd, "--to-file=.."), "");
});

afterAll(() => user.remove());

describe("what a glob becomes (red team)", () => {
  it.each(READS_OUTSIDE)("%j prints what is outside the directory", (command, prints) => {
    expect(user.runInBash(command)).toContain(prints);
  });

  it("echo a+=~ prints the home directory's path", () => {
    expect(user.runInBash("echo a+=~")).toContain(user.home);
  });

  it.each([...READS_OUTSIDE.map(([command]) => command), "echo a+=~", "echo a+=~root"])(
    "%j is not run at once",
    async (command) => {
      const risk = await classifyConnectorCall("Bash", { command }, user.cwd);
      expect(risk.class).not.toBe("read_only");
    },
  );

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
