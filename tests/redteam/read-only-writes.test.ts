import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../support/agent-tools";

/**
 * Red team: commands the classifier calls `read_only` run with the plan gate still `required`
 * (no plan approved). These ones write files and, through git's configuration, run code.
 */
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
});

async function unapproved() {
  harness = await createHarness();
  expect(harness.sandbox).toMatchObject({ status: "sandboxed" });
  harness.gate.value = "required";
  return harness;
}

describe("read_only bash that writes (red team)", () => {
  it("uniq writes its output to a second operand hidden behind `--` (no plan approved)", async () => {
    const { call, workspace } = await unapproved();
    const result = await call("bash", { command: "printf 'hello\\n' | uniq - -- -out" });
    // Expected: blocked by the plan gate. Actually: runs and creates the file "-out".
    expect(result.isError).toBe(true);
    expect(existsSync(path.join(workspace, "-out"))).toBe(false);
  });

  it("uniq with one glob that expands to two files overwrites the second (no plan approved)", async () => {
    const { call, workspace } = await unapproved();
    spawnSync("sh", ["-c", "echo keep > b.txt && echo attacker > a.txt && chmod 666 *.txt"], {
      cwd: workspace,
    });
    const result = await call("bash", { command: "uniq ./[ab].txt" });
    expect(result.isError).toBe(true);
    expect(readFileSync(path.join(workspace, "b.txt"), "utf8")).toBe("keep\n");
  });

  it("rewrites .git/config and runs core.fsmonitor through `git status`, all read_only", async () => {
    const { call, workspace, gate } = await unapproved();
    // The repository exists from earlier, approved work (made inside the sandbox, so git trusts it).
    gate.value = "approved";
    expect(await call("bash", { command: "git init -q ." })).toMatchObject({ isError: false });
    gate.value = "required";
    const command =
      "cd .git && printf '[core]\\n\\tfsmonitor = \"id > PWNED; false\"\\n' | uniq - -- -onfig" +
      " && uniq ./[-c]onfig && cd .. && git status";
    const result = await call("bash", { command });
    expect(result.isError).toBe(true);
    expect(existsSync(path.join(workspace, "PWNED"))).toBe(false);
  });

  it("git status (read_only) runs a program named in the repository's config, with the gate closed", async () => {
    // Work on an earlier, approved task left a repository whose config the agent wrote
    // (write_file is only `workspace`). On the next task, before any plan is approved, a
    // read_only `git status` runs core.fsmonitor; `git diff` would run diff.external the same way,
    // and a .git/hooks/post-index-change hook runs too.
    const { call, workspace, gate } = await unapproved();
    gate.value = "approved";
    expect(await call("bash", { command: "git init -q ." })).toMatchObject({ isError: false });
    expect(
      await call("edit_file", {
        path: ".git/config",
        oldText: "[core]",
        newText: '[core]\n\tfsmonitor = "id > PWNED2; false"',
      }),
    ).toMatchObject({ isError: false });
    gate.value = "required";
    const result = await call("bash", { command: "git status" });
    expect(existsSync(path.join(workspace, "PWNED2"))).toBe(false);
    expect(result.isError).toBe(true);
  });
});
