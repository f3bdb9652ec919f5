import { describe, expect, it } from "vitest";
import { assessToolRisk } from "./tool-risk";

describe("assessToolRisk", () => {
  it.each([
    "rm -rf build",
    "rm -fr /",
    "rm -r -f node_modules",
    "cd x && rm --recursive --force .",
    "git push origin main",
    "git -C repo push",
    "sudo apt-get install x",
    "echo hi > /etc/passwd",
    "cat a >> ../outside.txt",
    "cp secrets.txt /tmp/",
    "tee ~/notes < a",
  ])("flags the command %j", (command) => {
    expect(assessToolRisk("bash", { command })).not.toBeNull();
  });

  it.each([
    "ls -la",
    "rm notes.txt",
    "git status",
    "npm test",
    "echo ok > out.txt",
    "grep -r foo .",
    "cat x 2>/dev/null",
  ])("lets the command %j through", (command) => {
    expect(assessToolRisk("bash", { command })).toBeNull();
  });

  it("flags file writes outside the workspace", () => {
    expect(assessToolRisk("write_file", { path: "/etc/hosts" })).toMatch(/outside the workspace/);
    expect(assessToolRisk("edit_file", { path: "src/../../x" })).toMatch(/outside the workspace/);
    expect(assessToolRisk("write_file", { path: "src/app.ts" })).toBeNull();
    expect(assessToolRisk("read_file", { path: "/etc/hosts" })).toBeNull();
  });
});
