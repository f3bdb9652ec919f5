import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";
import { makeUserHome, type UserHome } from "../support/user-home";
import { readPlainCommands } from "../../lib/shared/protocol/plain-command";

/**
 * Red team, round four: the semantics of the programs on READ_ONLY_COMMANDS. A connected Claude
 * Code session's Bash runs at once, unsandboxed, as the user, when the classifier says `read_only`
 * and the plain-syntax lexer reads the same simple commands. Every command below is plain and was
 * judged `read_only` with the session directory `home/ada/api`; real bash 5.2 (jq 1.6, coreutils
 * 9.1, grep 3.8), run there, did what the comment says.
 *
 * 1. `jq --run-tests [FILE]` reads jq programs from a test file, or from standard input when no
 *    file is given (a quoted here-doc of plain text). The `env`/`$ENV` and `import`/`include` check
 *    looks only at the arguments, and only `-f`/`--from-file` are denied: the program in the
 *    here-doc runs, and jq prints "Expected 0, but got <value>" — the whole environment with `env`,
 *    the API key with `$ENV.ANTHROPIC_API_KEY`. (With a `~/.jq` directory, `import
 *    "../.docker/config" as $c; $c` in the here-doc also printed `~/.docker/config.json`.)
 * 2. `date [MMDDhhmm[[CC]YY][.ss]]` sets the system clock exactly as `date -s` does (date --help:
 *    "With -s, or with [MMDDhhmm[[CC]YY][.ss]], set the date and time"). Only `-s`/`--set` are
 *    denied. Under strace, `date 010100002000` called clock_settime(CLOCK_REALTIME, 946684800)
 *    (the call was failed by injection, not run: as root, or with CAP_SYS_TIME, it sets the
 *    machine's clock; as a user it fails with "cannot set date"). Not run here for that reason.
 * 3. grep's pattern slot: with no -e/-f the classifier skips the first operand that does not start
 *    with `-`, taking it for the pattern, but `--exclude-from FILE` takes the next word as a file.
 *    That word is never path-checked (`~/…`, `/abs`, `../…` all pass) and grep opens and reads it:
 *    a missing or unreadable file is reported by name ("No such file or directory", "Permission
 *    denied"), a readable one is silent, so whether `~/.ssh/id_rsa`, `~/.aws/credentials` or any
 *    other path exists and is readable is answered with no card (an `LS` of `~` needs one). Its
 *    lines become exclude globs, matched only against the names of files that exist here.
 *
 * Fixed: jq's --run-tests is denied; date with an operand other than +FORMAT sets the clock
 * (workspace); the word after an option that takes one (SEPARATE_VALUE_OPTIONS) is its value,
 * path-checked, and never the pattern.
 */
const SECRET = "TOPSECRET-ada-round-four";
const KEY = "sk-ant-FAKEKEY-for-red-team";

/** Prints the API key (or the whole environment) from jq's test runner. */
const PRINTS_THE_ENVIRONMENT = [
  "jq --run-tests <<'EOF'\n$ENV.ANTHROPIC_API_KEY\nnull\n0\nEOF",
  "jq --run-tests <<'EOF'\nenv\nnull\n0\nEOF",
  "jq --run-tests /dev/stdin <<'EOF'\nenv.ANTHROPIC_API_KEY\nnull\n0\nEOF",
];

/** Sets the system clock (clock_settime), as `date -s` would. */
const SETS_THE_CLOCK = ["date 010100002000", "date -u 0101000000.00"];

/** Reads a file outside the directory that the path check never saw. */
const READS_UNCHECKED = [
  "grep --exclude-from ~/.secret x README.md",
  "grep --exclude-from ../.secret x README.md",
  "grep --exclude-from /etc/shadow x README.md",
];

let user: UserHome;
let cwd: string;

beforeAll(() => {
  user = makeUserHome({
    prefix: "rt-round-four-",
    secret: SECRET,
    env: { ANTHROPIC_API_KEY: KEY },
  });
  cwd = user.cwd;
});

afterAll(() => user.remove());
const runInBash = (command: string) => user.runInBash(command);

const hasJq = spawnSync("jq", ["--version"]).status === 0;

describe("a connected session's read_only Bash, the read-only list's programs, round four (red team)", () => {
  it.each([...PRINTS_THE_ENVIRONMENT, ...SETS_THE_CLOCK, ...READS_UNCHECKED])(
    "%j is plain syntax, read alike by the lexer",
    (command) => {
      expect(readPlainCommands(command)).not.toBeNull();
    },
  );

  it.skipIf(!hasJq).each(PRINTS_THE_ENVIRONMENT)(
    "%j prints the API key from the environment in bash",
    (command) => {
      expect(runInBash(command)).toContain(KEY);
    },
  );

  it("grep --exclude-from opens a file outside the directory: it tells whether it exists", () => {
    expect(runInBash("grep --exclude-from ~/.secret x README.md")).toBe("");
    expect(runInBash("grep --exclude-from ../.secret x README.md")).toBe("");
    expect(runInBash("grep --exclude-from ~/.nothere x README.md")).toContain(
      "/.nothere: No such file or directory",
    );
  });

  it.each([...PRINTS_THE_ENVIRONMENT, ...SETS_THE_CLOCK, ...READS_UNCHECKED])(
    "%j is not run at once",
    async (command) => {
      const risk = await classifyConnectorCall("Bash", { command }, cwd);
      expect(risk.class).toBe("needs_approval");
    },
  );

  it("plain reads inside the directory still run at once", async () => {
    for (const command of [
      "jq .name package.json",
      "date +%Y-%m-%d",
      "date -u",
      "grep -rn hello src",
      "grep --exclude=*.md -r hello .",
    ]) {
      expect((await classifyConnectorCall("Bash", { command }, cwd)).class, command).toBe(
        "read_only",
      );
    }
  });
});
