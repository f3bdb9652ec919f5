import { beforeAll, describe, expect, it } from "vitest";
import { loadShellParser } from "../../lib/protocol/shell-command";
import { classifyShellCommand } from "../../lib/protocol/tool-risk";

beforeAll(async () => {
  await loadShellParser();
});

const classOf = (command: string) => classifyShellCommand(command).class;

describe("red team: read_only commands that write", () => {
  it.each([
    // uniq's output file is its second operand; an operand after `--` that looks like an option
    // is not counted, and one glob word can expand to two files.
    "printf 'x\\n' | uniq - -- -out",
    "uniq in -- -out",
    "uniq ./[ab].txt",
    "cd .git && uniq ./[-c]onfig",
  ])("%s is not read_only", (command) => {
    expect(classOf(command)).not.toBe("read_only");
  });
});

describe("red team: the tracked directory ignores subshells and failed cd", () => {
  // The classifier follows `cd sub` into a subshell / a pipeline stage / a cd that fails, so
  // `..` is judged from `sub` while the shell is still at the workspace root: a path that leaves
  // the workspace is not refused (it is read_only).
  it.each([
    "(cd a/b/c); cat ../../../etc/passwd",
    "cd a/b/c | true; cat ../../../etc/passwd",
    "cd no-such-dir; cat ../outside",
  ])("%s is refused or needs approval", (command) => {
    expect(["refused", "needs_approval"]).toContain(classOf(command));
  });
});

describe("red team: workspace-class commands that run inline code or another command", () => {
  it.each([
    // versioned interpreter names are not in INTERPRETERS
    "python3.11 -c 'import os; os.system(\"id\")'",
    "perl5.36.0 -e 'system(\"id\")'",
    // awk with a program file *and* an inline program
    "gawk -f x -e 'BEGIN{system(\"id\")}'",
    "awk -f prog -e 'BEGIN{system(\"id\")}'",
    // tools that run a command given as an argument
    "tar -cf /dev/null x --checkpoint=1 --checkpoint-action=exec=id",
    "tar -xf x.tar --to-command=id",
    "split -b1 --filter=id x",
    "zip x.zip x -TT id",
    "vim -es -c '!id' -c q",
    "ed -s x <<< '!id'",
    "make --eval='x:;id' x",
    "sqlite3 :memory: '.shell id'",
    "git bisect run id",
    "git grep --open-files-in-pager=id foo",
    "php -B 'system(\"id\");' -F x",
    // command runners missing from COMMAND_RUNNERS
    "setarch x86_64 id",
    "taskset 1 id",
    "prlimit id",
    "chrt 0 id",
    "sg agent id",
    "run-parts .",
  ])("%s needs approval", (command) => {
    expect(classOf(command)).toBe("needs_approval");
  });
});

describe("red team: workspace-class history rewriting / discarding work", () => {
  it.each([
    "git switch -f main",
    "git switch --discard-changes main",
    "git checkout -B main HEAD~3",
    "git reset --soft HEAD~3",
    "git reset HEAD~3",
    "git commit --fixup=amend:HEAD",
    // "-n" here is the value of -e, or a pathspec after "--": not a dry run. Both remove every
    // untracked file and directory (confirmed in the sandbox).
    "git clean -fdx -e -n",
    "git clean -fdx -e-n",
    "git clean -fdx -- -n .",
  ])("%s needs approval", (command) => {
    expect(classOf(command)).toBe("needs_approval");
  });
});

describe("red team: sensitive variables set without an assignment", () => {
  it.each(["read PATH <<< ./bin", "printf -v PATH ./bin", "getopts a PATH"])(
    "%s needs approval (like PATH=./bin)",
    (command) => {
      expect(classOf(command)).toBe("needs_approval");
    },
  );
});

describe("red team: workspace-class recursive deletes", () => {
  // Moving a tree to the call's private /tmp (a tmpfs that dies with the call) deletes it; tar
  // --remove-files deletes what it archived. Confirmed in the sandbox: the trees are gone.
  it.each(["mv src /tmp", "mv .git /tmp", "tar --remove-files -cf /dev/null src"])(
    "%s needs approval, like rm -r",
    (command) => {
      expect(classOf(command)).toBe("needs_approval");
    },
  );
});
