import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { isPlainAsParsed, readPlainCommands } from "./plain-command";
import { analyzeShellCommand, loadShellParser } from "./shell-command";

beforeAll(async () => {
  await loadShellParser();
});

const PLAIN: readonly string[] = [
  "ls -la",
  "cat README.md | head -5",
  "grep -rn 'TODO: x' src",
  'grep -rn "a b" src/*.ts',
  "cd src && cat ../README.md",
  "ls 2>/dev/null; ls >/dev/null 2>&1",
  "wc -l < README.md",
  "cat <<'EOF'\nhello $HOME `id`\nEOF",
  "cat <<EOF\nhello\nEOF",
  "cat <<-EOF\n\thello\n\tEOF",
  "git log --oneline -5 &&\ngit status",
  "find . -name '*.ts' -newer package.json",
  // Plain, and read alike: the classifier judges what it does (find -delete needs the Lead).
  "find . 2>&- -delete",
  "test a = b",
  "grep -c a== README.md",
];

const NOT_PLAIN: readonly string[] = [
  "echo $HOME",
  'echo "$HOME"',
  "echo ${x@P}",
  "ls\n\\find . -delete",
  "ls \\\t#; find . -delete",
  "ls # a comment",
  "cat {a,b}",
  "cat <<EOF\n$KEY\nEOF",
  "cat <<EOF; find . -delete\n$\nEOF ",
  "cat <<'a\\b'\na\\b\ntouch PWNED\nab",
  "cat <<EOF\nunterminated",
  "ls 2>out.txt",
  "ls &> /dev/null",
  "ls &",
  "(cd src); cat ../x",
  "{ cd src; } | cat",
  "! cd x && cat ../y",
  "if test -f a\nthen cat a\nfi",
  "x=1 ls",
  "ls 'unterminated",
  "ls && ",
  "; ls",
  "ls;;",
  // zsh reads these otherwise than bash (decision 073).
  "cat =deploy.sh",
  "cat ''=deploy.sh",
  "cat < =deploy.sh",
  "ls <1-5>&- env",
  "cat x<1-5>&- env",
  "cat README.md 2<-5>&- env",
];

describe("readPlainCommands", () => {
  it.each(PLAIN)("%j is plain, and read as the parse reads it", (command) => {
    expect(readPlainCommands(command)).not.toBeNull();
    expect(isPlainAsParsed(analyzeShellCommand(command))).toBe(true);
  });

  it.each(NOT_PLAIN)("%j is not plain", (command) => {
    expect(isPlainAsParsed(analyzeShellCommand(command))).toBe(false);
  });

  it("gives each command its words as bash passes them", () => {
    const command = `cat 'a b'"c"d ./e 2>/dev/null | grep -n x`;
    expect(readPlainCommands(command)).toEqual([
      { words: ["cat", "a bcd", "./e"], redirects: 1 },
      { words: ["grep", "-n", "x"], redirects: 0 },
    ]);
    // bash agrees: each word, one per line.
    const run = spawnSync("bash", ["-c", `printf '%s\\n' 'a b'"c"d ./e`], { encoding: "utf8" });
    expect(run.stdout).toBe("a bcd\n./e\n");
  });
});
