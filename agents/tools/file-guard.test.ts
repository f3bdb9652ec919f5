import { createHash } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../../tests/support/agent-tools";

let harness: Harness;

beforeEach(async () => {
  harness = await createHarness();
});

afterEach(async () => {
  await harness.cleanup();
});

const workspaceFile = (name: string) => path.join(harness.workspace, name);
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** The `file` the worker sent to the gate with its one call. */
function sentFile(): unknown {
  const [call] = harness.client.callsTo("checkToolCall");
  return (call?.args[2] as { file?: unknown } | undefined)?.file;
}

describe("the worker sends the gate the file's base hash and both sides of the change", () => {
  it("write_file of a new file: absent, empty before, the content after", async () => {
    const result = await harness.call("write_file", { path: "notes/a.md", content: "# A\n" });
    expect(result.isError).toBe(false);
    expect(sentFile()).toEqual({
      path: "notes/a.md",
      baseHash: "absent",
      before: "",
      after: "# A\n",
    });
  });

  it("edit_file: the sha-256 of the bytes, the file and the file with the edit", async () => {
    await writeFile(workspaceFile("app.ts"), "const a = 1;\nconst b = 2;\n");
    const result = await harness.call("edit_file", {
      path: "app.ts",
      oldText: "b = 2",
      newText: "b = 3",
    });
    expect(result.isError).toBe(false);
    expect(sentFile()).toEqual({
      path: "app.ts",
      baseHash: sha256("const a = 1;\nconst b = 2;\n"),
      before: "const a = 1;\nconst b = 2;\n",
      after: "const a = 1;\nconst b = 3;\n",
    });
  });

  it("a file that is not UTF-8 text is hashed but not shown", async () => {
    await writeFile(workspaceFile("blob.bin"), Buffer.from([0xff, 0xfe, 0x00, 0x80]));
    await harness.call("write_file", { path: "blob.bin", content: "text" });
    expect(sentFile()).toEqual({
      path: "blob.bin",
      baseHash: `sha256:${createHash("sha256")
        .update(Buffer.from([0xff, 0xfe, 0x00, 0x80]))
        .digest("hex")}`,
      unshown: { reason: "not_text" },
    });
  });

  it("a change past the card's limit is hashed and said to be too large", async () => {
    const big = "x".repeat(200 * 1024);
    await writeFile(workspaceFile("big.txt"), big);
    await harness.call("write_file", { path: "big.txt", content: `${big}y` });
    expect(sentFile()).toMatchObject({
      baseHash: sha256(big),
      unshown: { reason: "too_large" },
    });
    expect(sentFile()).not.toHaveProperty("before");
  });

  it("a path outside the workspace is sent as unreadable, and the write is refused", async () => {
    const result = await harness.call("write_file", { path: "../outside/x", content: "pwned" });
    expect(result.isError).toBe(true);
    expect(sentFile()).toMatchObject({ baseHash: "unreadable", unshown: { reason: "unreadable" } });
  });
});

describe("a write between the gate's verdict and the write is refused locally (fails closed)", () => {
  it("write_file over a file changed during the check: FILE_CHANGED, the change kept", async () => {
    await writeFile(workspaceFile("config.json"), '{"safe":true}');
    harness.client.duringCheck = () => writeFile(workspaceFile("config.json"), '{"safe":false}');
    const result = await harness.call("write_file", { path: "config.json", content: "{}" });
    expect(result).toMatchObject({ isError: true, code: "FILE_CHANGED" });
    expect(result.content).toContain("nothing was written");
    expect(await readFile(workspaceFile("config.json"), "utf8")).toBe('{"safe":false}');
  });

  it("write_file of a new file that appears during the check: FILE_CHANGED", async () => {
    harness.client.duringCheck = () => writeFile(workspaceFile("new.txt"), "someone else's");
    const result = await harness.call("write_file", { path: "new.txt", content: "mine" });
    expect(result).toMatchObject({ isError: true, code: "FILE_CHANGED" });
    expect(await readFile(workspaceFile("new.txt"), "utf8")).toBe("someone else's");
  });

  it("edit_file of a file changed during the check: FILE_CHANGED, the edit not made", async () => {
    await writeFile(workspaceFile("a.ts"), "let x = 1;\nlet y = 2;\n");
    harness.client.duringCheck = () => writeFile(workspaceFile("a.ts"), "let x = 1;\nlet y = 9;\n");
    const result = await harness.call("edit_file", {
      path: "a.ts",
      oldText: "x = 1",
      newText: "x = 5",
    });
    expect(result).toMatchObject({ isError: true, code: "FILE_CHANGED" });
    expect(await readFile(workspaceFile("a.ts"), "utf8")).toBe("let x = 1;\nlet y = 9;\n");
  });

  it("edit_file of a file removed during the check: FILE_CHANGED", async () => {
    await writeFile(workspaceFile("gone.ts"), "a");
    harness.client.duringCheck = () => rm(workspaceFile("gone.ts"));
    const result = await harness.call("edit_file", { path: "gone.ts", oldText: "a", newText: "b" });
    expect(result).toMatchObject({ isError: true, code: "FILE_CHANGED" });
  });

  it("edit_file never creates a file that appeared as it was checked", async () => {
    harness.client.duringCheck = () => writeFile(workspaceFile("late.ts"), "a");
    const result = await harness.call("edit_file", { path: "late.ts", oldText: "a", newText: "b" });
    expect(result).toMatchObject({ isError: true, code: "FILE_CHANGED" });
    expect(await readFile(workspaceFile("late.ts"), "utf8")).toBe("a");
  });

  it("an unchanged file is written once", async () => {
    await writeFile(workspaceFile("same.txt"), "old");
    const result = await harness.call("write_file", { path: "same.txt", content: "new" });
    expect(result.isError).toBe(false);
    expect(await readFile(workspaceFile("same.txt"), "utf8")).toBe("new");
  });
});
