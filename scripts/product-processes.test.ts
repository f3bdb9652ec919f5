import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testSandboxSettings } from "../tests/support/agent-tools";
import { describeMissingSandbox } from "./product-processes";

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "handshake-start-"));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

describe("npm start's sandbox check", () => {
  it("names the fix when bubblewrap is missing, and leaves no probe folder behind", async () => {
    const line = await describeMissingSandbox(
      dataDir,
      testSandboxSettings({ bwrapPath: "/nonexistent/bwrap" }),
    );
    expect(line).toBe(
      "[sandbox] agents' bash tool is DISABLED: /nonexistent/bwrap not found; install bubblewrap: apt-get install bubblewrap",
    );
    expect(await readdir(path.join(dataDir, "workspaces"))).toEqual([]);
  });

  it("says nothing when the sandbox works", async () => {
    expect(await describeMissingSandbox(dataDir, testSandboxSettings())).toBeNull();
  });
});
