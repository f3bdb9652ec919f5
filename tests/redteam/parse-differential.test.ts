import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";
import { decideGate } from "../../lib/shared/protocol/gate";
import { loadShellParser } from "../../lib/shared/protocol/shell-command";
import { classifyShellCommand } from "../../lib/shared/protocol/tool-risk";

/**
 * Red team, differential: the parse (tree-sitter-bash) against real bash 5.2 and zsh 5.9. Each
 * command below was judged `read_only` (so it ran before any plan was approved and, in a connected
 * Claude Code session, at once and unsandboxed on the user's machine), yet bash runs a command or
 * an option the parse did not list:
 *
 * 1. A line that starts with a backslash (`ls⏎\find . -delete`): the grammar reads the newline as
 *    part of a word, so `\find`, `.` and `-delete` become operands of `ls`; bash runs `find`.
 * 2. A here-doc body line that is only `\`: the grammar reads it as a line continuation and lets
 *    the body run past the delimiter, so the lines bash runs after the here-doc are body text.
 * 3. An escaped tab or space before `#` (`ls \⇥#; find . -delete`, `ls \ #; touch PWNED`): bash
 *    reads `\⇥#` as one word; the grammar drops the escaped blank and reads the rest of the line
 *    as a comment. Round two fixed the tab, not the space: `\ #; find . -delete` was no command.
 * 4. `>&-`, `<&-`, `2>&-`: the grammar takes the next word as the redirect's target (a path that is
 *    only checked lexically), so `-delete`, `-o/home/…` or `--pre=sh` is no option of the command.
 * 5. A brace expansion whose alternatives hold a brace pair (`{-exec,sh,-c,id,{},\;}`,
 *    `{~/.ssh/id_rsa,{}}`) is not recognised as one and is taken as literal text.
 * 6. A here-doc whose delimiter line has a trailing space (`cat <<EOF; find . -delete⏎$⏎EOF `):
 *    the command after `;` on the here-doc's line becomes operands of `cat`.
 * 7. `{name}` right before a redirection (`true {PATH}>&2; ls`): bash and zsh store the new
 *    descriptor's number in `name` (PATH=10), in this shell; the grammar reads a word `{PATH}`, so
 *    the `ls` that follows ran `./10/ls`, a program of the workspace.
 */
const CWD = "/home/ada/api";

/** Harmless spellings, run in real bash below: each creates PWNED or deletes README.md. */
const RUNNABLE: { command: string; effect: "creates PWNED" | "deletes README.md" }[] = [
  { command: "ls\n\\touch PWNED", effect: "creates PWNED" },
  { command: "cat <<'EOF'\n\\\nEOF\ntouch PWNED\nEOF", effect: "creates PWNED" },
  { command: "cat <<EOF\n\\\nEOF\ntouch PWNED\nEOF", effect: "creates PWNED" },
  { command: "ls \\\t#; touch PWNED", effect: "creates PWNED" },
  { command: "find . 2>&- -delete", effect: "deletes README.md" },
  { command: "find . <&- -delete", effect: "deletes README.md" },
  { command: "sort README.md 2>&- -oPWNED", effect: "creates PWNED" },
  { command: "find . -maxdepth 0 {-exec,touch,PWNED,{},\\;}", effect: "creates PWNED" },
  { command: "cat <<EOF; touch PWNED\n$\nEOF ", effect: "creates PWNED" },
  { command: "\\ #; touch PWNED", effect: "creates PWNED" },
  { command: "ls \\ #; touch PWNED", effect: "creates PWNED" },
  { command: 'ls "x"\\ #;touch PWNED', effect: "creates PWNED" },
  { command: "ls \\ #; touch PWNED; echo RAN", effect: "creates PWNED" },
  { command: "true {PATH}>&2; ls", effect: "creates PWNED" },
  { command: "true {PATH}<&0; ls", effect: "creates PWNED" },
  { command: "true {PATH}<README.md; ls", effect: "creates PWNED" },
  { command: "export a {PATH}>&2; ls", effect: "creates PWNED" },
];

/** The same shapes doing harm on the user's machine: all were `read_only` for the connector. */
const HARMFUL = [
  "ls\n\\find . -delete",
  "ls\n\\sh -c 'cat ~/.ssh/id_rsa'",
  "cat <<'EOF'\n\\\nEOF\nfind . -delete\nEOF",
  "ls \\\t#; find . -delete",
  "cat README.md\\\t#; cat ~/.ssh/id_rsa",
  "find . 2>&- -delete",
  "find . <&- -delete",
  "sort README.md 2>&- -o/home/ada/.bashrc",
  "rg x . 2>&- --pre=sh",
  "find . -maxdepth 0 {-exec,sh,-c,id,{},\\;}",
  "cat {~/.ssh/id_rsa,{}}",
  "cat <<EOF; find . -delete\n$\nEOF ",
];

/** Runs the command in a project with README.md and an `ls` that creates PWNED in `10/` to `19/`. */
function runIn(shell: string, command: string): { pwned: boolean; readmeGone: boolean } {
  const dir = mkdtempSync(path.join(tmpdir(), "rt-parse-diff-"));
  try {
    writeFileSync(path.join(dir, "README.md"), "readme\n");
    // The first descriptor a `{name}` redirection opens: 10 in bash, 10 to 12 in zsh.
    for (let fd = 10; fd < 20; fd++) {
      mkdirSync(path.join(dir, String(fd)));
      writeFileSync(path.join(dir, String(fd), "ls"), "#!/bin/sh\n/usr/bin/touch PWNED\n");
      chmodSync(path.join(dir, String(fd), "ls"), 0o755);
    }
    spawnSync(shell, ["-c", command], { cwd: dir, stdio: "ignore", timeout: 5_000 });
    return {
      pwned: existsSync(path.join(dir, "PWNED")),
      readmeGone: !existsSync(path.join(dir, "README.md")),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  await loadShellParser();
});

describe("bash runs what the parse does not list (red team, differential)", () => {
  it.each(RUNNABLE)("$command: bash and zsh $effect, so it is not read-only", (row) => {
    for (const shell of ["/bin/bash", "/usr/bin/zsh"]) {
      const ran = runIn(shell, row.command);
      expect(row.effect === "creates PWNED" ? ran.pwned : ran.readmeGone, shell).toBe(true);
    }
    const risk = classifyShellCommand(row.command);
    expect(risk.class).not.toBe("read_only");
    expect(decideGate("required", "bash", risk)).toMatchObject({ allowed: false });
  });

  it.each(HARMFUL)("%j does not run at once in a connected session", async (command) => {
    expect((await classifyConnectorCall("Bash", { command }, CWD)).class).not.toBe("read_only");
  });

  it("plain reads beside them still run at once", async () => {
    for (const command of [
      "ls\ncat README.md",
      "cat <<'EOF'\nx\nEOF",
      "cat <<-EOF\n\tx\n\tEOF",
      "cat <<EOF | grep x\nx\nEOF",
      "cat <<EOF && ls -la\nx\nEOF",
      "cat README.md 2>&1",
      "ls 2>&-",
    ]) {
      expect((await classifyConnectorCall("Bash", { command }, CWD)).class).toBe("read_only");
    }
  });
});
