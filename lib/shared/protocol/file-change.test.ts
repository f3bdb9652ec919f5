import { describe, expect, it } from "vitest";
import { buildFileDiff, languageOfPath } from "../display/file-diff";
import { proposeContent } from "./file-change";
import { snapshotFileChange } from "./file-snapshot";

describe("proposeContent: what each file tool would leave", () => {
  it.each([
    ["write_file", { content: "new" }, "old", { ok: true, after: "new" }],
    ["Write", { content: "" }, "old", { ok: true, after: "" }],
    ["edit_file", { oldText: "b", newText: "$&c" }, "abc", { ok: true, after: "a$&cc" }],
    ["edit_file", { oldText: "aa", newText: "b" }, "aaa", { ok: false }],
    ["edit_file", { oldText: "x", newText: "y" }, "abc", { ok: false }],
    ["Edit", { old_string: "a", new_string: "b" }, "a a", { ok: false }],
    [
      "Edit",
      { old_string: "a", new_string: "b", replace_all: true },
      "a a",
      { ok: true, after: "b b" },
    ],
    ["Edit", { old_string: "", new_string: "new" }, "", { ok: true, after: "new" }],
    ["Edit", { old_string: "", new_string: "new" }, "old", { ok: false }],
    [
      "MultiEdit",
      {
        edits: [
          { old_string: "a", new_string: "b" },
          { old_string: "bc", new_string: "d" },
        ],
      },
      "ac",
      { ok: true, after: "d" },
    ],
    ["MultiEdit", { edits: [{ old_string: "zz", new_string: "b" }] }, "ac", { ok: false }],
    ["bash", { command: "x" }, "", { ok: false }],
  ] as const)("%s %j on %j", (tool, args, before, expected) => {
    expect(proposeContent(tool, args, before)).toMatchObject(expected);
  });
});

/** Edits of a few kilobytes whose replace_all steps multiply an empty file to 600 million units. */
const MULTIPLYING_EDITS = {
  file_path: "x.txt",
  edits: [
    { old_string: "", new_string: "b".repeat(1000) },
    { old_string: "b", new_string: "c".repeat(1000), replace_all: true },
    { old_string: "c", new_string: "d".repeat(600), replace_all: true },
  ],
};

describe("proposeContent: a change too large to show is not worked out", () => {
  it("stops a MultiEdit that multiplies the content, before building it", () => {
    // Built, it threw RangeError (Invalid string length) out of the server's schema check: a 500.
    expect(proposeContent("MultiEdit", MULTIPLYING_EDITS, "")).toEqual({
      ok: false,
      reason: "too_large",
      problem: "edit 2: the change would leave 1000000 characters, more than a diff shows",
    });
  });

  it("the hook's snapshot says too large, not that the change does not apply", () => {
    expect(snapshotFileChange("MultiEdit", MULTIPLYING_EDITS, "x.txt", { kind: "absent" })).toEqual(
      {
        path: "x.txt",
        baseHash: "absent",
        unshown: {
          reason: "too_large",
          detail: "edit 2: the change would leave 1000000 characters, more than a diff shows",
        },
      },
    );
  });
});

describe("proposeContent: work bounded by the file, not by its square", () => {
  it("counts an oldText's overlapping occurrences only so far", () => {
    // Each overlapping occurrence cost a search: half a file of `a`s in that file took seconds.
    const before = "a".repeat(220_000);
    expect(
      proposeContent("edit_file", { oldText: "a".repeat(110_000), newText: "b" }, before),
    ).toEqual({
      ok: false,
      reason: "does_not_apply",
      problem: "oldText occurs more than 10 times; it must occur exactly once",
    });
    expect(proposeContent("edit_file", { oldText: "a", newText: "b" }, "aaaaaaaaaa")).toMatchObject(
      {
        problem: "oldText occurs 10 times; it must occur exactly once",
      },
    );
  });

  it("stops a MultiEdit whose edits together would search too much of the file", () => {
    // Each edit searched the whole content: thousands of edits of a large file took seconds.
    const edits = Array.from({ length: 400 }, () => ({
      old_string: "a",
      new_string: "a",
      replace_all: true,
    }));
    expect(proposeContent("MultiEdit", { edits }, "a".repeat(20_000))).toEqual({
      ok: false,
      reason: "too_large",
      problem: "the 400 edits would search more than 1048576 characters",
    });
    expect(proposeContent("MultiEdit", { edits: edits.slice(0, 50) }, "a".repeat(20_000))).toEqual({
      ok: true,
      after: "a".repeat(20_000),
    });
  });
});

describe("snapshotFileChange", () => {
  it("an edit that does not apply keeps its before and says why", () => {
    const file = snapshotFileChange("edit_file", { oldText: "x", newText: "y" }, "a.txt", {
      kind: "bytes",
      bytes: Buffer.from("abc"),
    });
    expect(file).toMatchObject({ before: "abc", unshown: { reason: "does_not_apply" } });
    expect(file).not.toHaveProperty("after");
  });

  it("says why a file is unreadable without ending in half a character", () => {
    // An error naming a path with an emoji, its first half at the cut.
    const file = snapshotFileChange("Write", { content: "x" }, "a.txt", {
      kind: "unreadable",
      detail: "a".repeat(499) + "\u{1F600}",
    });
    expect(file.unshown).toEqual({ reason: "unreadable", detail: "a".repeat(499) });
  });

  it("bytes that are not UTF-8 text are not shown", () => {
    const file = snapshotFileChange("Write", { content: "x" }, "a.bin", {
      kind: "bytes",
      bytes: Buffer.from([0xc3, 0x28]),
    });
    expect(file.unshown?.reason).toBe("not_text");
  });
});

describe("buildFileDiff", () => {
  it("numbers old and new lines and counts the changes", () => {
    const diff = buildFileDiff("a\nb\nc\n", "a\nB\nc\nd");
    expect(diff).toMatchObject({ added: 2, removed: 1 });
    expect(diff.hunks[0]?.lines).toEqual([
      { kind: "context", text: "a", oldLine: 1, newLine: 1 },
      { kind: "removed", text: "b", oldLine: 2, newLine: null },
      { kind: "added", text: "B", oldLine: null, newLine: 2 },
      { kind: "context", text: "c", oldLine: 3, newLine: 3 },
      { kind: "added", text: "d", oldLine: null, newLine: 4 },
      { kind: "no_newline", text: "No newline at end of file", oldLine: null, newLine: null },
    ]);
  });

  it("knows a language by extension only", () => {
    expect(languageOfPath("src/App.TSX")).toBe("typescript");
    expect(languageOfPath(".bashrc")).toBeNull();
    expect(languageOfPath("Makefile")).toBeNull();
    expect(languageOfPath("x.constructor")).toBeNull();
  });
});
