import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../support/agent-tools";
import { loadShellParser } from "../../lib/shared/protocol/shell-command";
import { classifyShellCommand } from "../../lib/shared/protocol/tool-risk";

/**
 * Red team: backticks inside an unquoted here-doc body are a command substitution bash runs, but
 * the classifier does not see them ($(…) in the same place is caught). The whole command is
 * `read_only`, so it runs with no plan approved and no tool approval.
 */
const COMMAND = "cat <<EOF\n`id > PWNED`\nEOF";

let harness: Harness | undefined;
beforeAll(async () => {
  await loadShellParser();
});
afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
});

describe("backticks in a here-doc body (red team)", () => {
  it.each([
    COMMAND,
    "cat <<EOF | grep x\n`touch PWNED`\nEOF",
    "cat <<-EOF\n\t`touch PWNED`\n\tEOF",
    "cat <<EOF\n${x:-`touch PWNED`}\nEOF",
    'cat <<EOF\n"`touch PWNED`"\nEOF',
    // outside a here-doc, backticks inside ${…} are missed too (workspace instead of needs_approval)
    "echo ${x:-`touch PWNED`}",
    'echo "${x:-`touch PWNED`}"',
  ])("%j needs approval, like $(…) there does", (command) => {
    expect(classifyShellCommand(command).class).toBe("needs_approval");
  });

  it("do not run before a plan is approved", async () => {
    harness = await createHarness();
    expect(harness.sandbox).toMatchObject({ status: "sandboxed" });
    harness.gate.value = "required";
    const result = await harness.call("bash", { command: COMMAND });
    const pwned = path.join(harness.workspace, "PWNED");
    const ran = existsSync(pwned) ? readFileSync(pwned, "utf8") : "";
    expect(ran).toBe(""); // actually: "uid=1000(agent) …"
    expect(result.isError).toBe(true);
  });
});
