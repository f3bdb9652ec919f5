import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  measureWorkspace,
  prepareWorkspace,
  WORKSPACE_OVER_QUOTA,
} from "../../agents/tools/sandbox";
import { createHarness, type Harness } from "../support/agent-tools";

/**
 * Red team: the workspace quota, the only bound on the host's disk, was measured by walking the
 * workspace with absolute host paths. A folder whose host path is longer than PATH_MAX made
 * `readdir` fail with ENAMETOOLONG, which the walk skipped: whatever the sandbox wrote below it was
 * never counted, and bash can build such a tree with relative `mkdir && cd` steps. The walk also
 * counted blocks only, so empty files (inodes) were nearly free.
 */
const MIB = 1024 * 1024;
let harness: Harness | undefined;

afterEach(async () => {
  // fs.rm cannot remove the tree (ENAMETOOLONG): GNU rm walks it by descriptor.
  if (harness) spawnSync("rm", ["-rf", harness.workspace]);
  await harness?.cleanup();
  harness = undefined;
});

// 20 nested folders of 250 characters: ~5000 bytes of path below the workspace, past PATH_MAX.
const DEEP =
  "d=$(printf 'a%.0s' {1..250}); for i in $(seq 1 20); do mkdir $d && cd $d || exit 9; done";

async function openHarness(quotaBytes: number): Promise<Harness> {
  harness = await createHarness({ limits: { workspaceQuotaBytes: quotaBytes } });
  expect(harness.sandbox).toMatchObject({ status: "sandboxed" });
  // The plan is approved and the Lead approved the call: the gate is open.
  harness.client.verdict = { allowed: true, requestId: "req-1" } as typeof harness.client.verdict;
  return harness;
}

describe("workspace quota vs a tree deeper than PATH_MAX (red team)", () => {
  it("counts what is written below a path longer than PATH_MAX", async () => {
    const { call, workspace } = await openHarness(4 * MIB);
    // 24 MB below the deep tree, six times the 4 MiB quota.
    const write = await call("bash", {
      command: `${DEEP}; for i in 1 2 3; do head -c 8000000 /dev/zero > big$i || exit 8; done; echo wrote`,
      timeoutSeconds: 60,
    });
    expect(write.content).toContain("wrote");
    expect(write.content).toContain(`--- workspace (${WORKSPACE_OVER_QUOTA}) ---`);
    expect((await measureWorkspace(workspace, 1024 * MIB)).bytes).toBeGreaterThan(24_000_000);
    const next = await call("bash", { command: "echo x > small && echo wrote-again" });
    expect(next.content).not.toContain("wrote-again");
  });

  it("hands such a tree to the sandbox's uid again when the worker restarts", async () => {
    const { call, workspace, sandbox } = await openHarness(64 * MIB);
    await call("bash", { command: `${DEEP}; echo x > leaf` });
    if (sandbox.status !== "sandboxed") throw new Error("no sandbox");
    // It threw ENAMETOOLONG, and the respawned worker came up without bash.
    await expect(prepareWorkspace(workspace, sandbox.settings.identity)).resolves.toBeUndefined();
  });

  it("counts every entry as a block at least: empty files are inodes of the host", async () => {
    const { call } = await openHarness(4 * MIB);
    const made = await call("bash", { command: "touch e{1..1500} && echo made" });
    expect(made.content).toContain("made");
    expect(made.content).toContain("this call pushed the workspace over its quota");
  });

  it("says, without the host's path, why a workspace cannot be measured, and counts it as over", async () => {
    const missing = path.join("/tmp", `handshake-no-workspace-${process.pid}`);
    const usage = await measureWorkspace(missing, MIB);
    expect(usage.problem).toMatch(/No such file or directory/);
    expect(usage.problem).toContain("/workspace");
    expect(usage.problem).not.toContain(missing);
  });
});
