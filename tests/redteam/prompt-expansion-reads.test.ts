import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../support/agent-tools";
import { classifyConnectorCall } from "../../lib/protocol/connector-gate";
import { analyzeShellCommand, loadShellParser } from "../../lib/shared/protocol/shell-command";
import { classifyShellCommand } from "../../lib/shared/protocol/tool-risk";
import { matchesPattern, prepareCall } from "../../lib/shared/rules/match";
import { parseRulePattern } from "../../lib/shared/rules/pattern";

/**
 * Red team: `${x:=…}` assigns inside a word and `${x@P}` expands the value as a prompt string, which
 * runs command substitution. `$(` is spelled `\$'('` (or built from `${d:=$}`), so the raw-text
 * backstop never sees it, and words that are not a command's arguments (a read redirect's target, a
 * here-string, `[[ … ]]`, a `for` list, a `case` subject) or a quoted `test -v` operand are not
 * judged at all: each command was `read_only` and ran with no plan approved — and, in a connected
 * Claude Code session, unsandboxed on the user's machine without asking the Lead. Such expansions
 * are now constructs of the parse (lib/shared/protocol/shell-command.ts) wherever they stand.
 */
const RUNS_TOUCH = [
  "test -v 'a[${d:=$}${x:=${d}(touch PWNED)}${x@P}]'",
  "cat < ${x:=\\$'(touch PWNED)'}${x@P}",
  "ls <<< ${x:=\\$'(touch PWNED)'}${x@P}",
  "[[ ${x:=\\$'(touch PWNED)'}${x@P} ]]",
  "for i in ${x:=\\$'(touch PWNED)'}${x@P}; do ls; done",
  "case ${x:=\\$'(touch PWNED)'}${x@P} in esac",
];

let harness: Harness | undefined;
beforeAll(async () => {
  await loadShellParser();
});
afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
});

describe("command substitution through ${x@P} (red team)", () => {
  it.each(RUNS_TOUCH)("%j really runs `touch PWNED` in bash", (command) => {
    const directory = mkdtempSync(path.join(tmpdir(), "prompt-expansion-"));
    try {
      spawnSync("bash", ["-c", command], { cwd: directory, stdio: "ignore" });
      expect(existsSync(path.join(directory, "PWNED"))).toBe(true);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it.each(RUNS_TOUCH)("%j needs approval, like $(…) there does", (command) => {
    expect(classifyShellCommand(command).class).toBe("needs_approval");
  });

  it.each(RUNS_TOUCH)("%j is not run at once in a connected session", async (command) => {
    const risk = await classifyConnectorCall("Bash", { command }, "/home/alice/project");
    expect(risk.class).toBe("needs_approval");
  });

  it("an exact allow rule `bash(npm test)` does not cover a for loop whose list runs a command", () => {
    const parsed = parseRulePattern("bash(npm test)");
    if (!parsed.ok) throw new Error(parsed.error);
    const command = "for i in ${x:=\\$'(touch PWNED)'}${x@P}; do npm test; done";
    const call = prepareCall("bash", { command }, null, analyzeShellCommand);
    expect(matchesPattern(parsed.pattern, call, "surely")).toBe(false);
  });

  it("does not run before a plan is approved", async () => {
    harness = await createHarness();
    expect(harness.sandbox).toMatchObject({ status: "sandboxed" });
    harness.gate.value = "required";
    const command = "cat < ${x:=\\$'(id > PWNED)'}${x@P}";
    const result = await harness.call("bash", { command });
    const pwned = path.join(harness.workspace, "PWNED");
    const ran = existsSync(pwned) ? readFileSync(pwned, "utf8") : "";
    expect(ran).toBe("");
    expect(result.isError).toBe(true);
  });
});
