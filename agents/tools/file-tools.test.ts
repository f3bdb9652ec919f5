import { execFileSync } from "node:child_process";
import { access, link, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_WRITE_BYTES } from "../../lib/shared/protocol/tool-args";
import { MAX_LIST_ENTRIES, MAX_READ_BYTES } from "./file-tools";
import { createHarness, type Harness } from "../../tests/support/agent-tools";

let harness: Harness;

beforeEach(async () => {
  harness = await createHarness();
  await writeFile(path.join(harness.outside, "secret.txt"), "outside secret");
  // A link inside the workspace to a folder outside it, and one that dangles outside.
  await symlink(harness.outside, path.join(harness.workspace, "escape"));
  await symlink(
    path.join(harness.outside, "not-yet.txt"),
    path.join(harness.workspace, "dangling.txt"),
  );
});

afterEach(async () => {
  await harness.cleanup();
});

async function isPresent(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

const workspaceFile = (name: string) => path.join(harness.workspace, name);

describe("workspace confinement", () => {
  const escapes = [
    ["a parent-relative path", "../outside/secret.txt"],
    ["a bare parent", "../x"],
    ["an absolute path elsewhere", "/etc/passwd"],
    ["a symlinked folder", "escape/secret.txt"],
    ["a dotted detour through a symlink", "./sub/../escape/secret.txt"],
  ] as const;

  it.each(escapes)("read_file refuses %s", async (_label, target) => {
    const result = await harness.call("read_file", { path: target });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/outside the workspace|leaves the workspace/);
  });

  it.each(escapes)("edit_file refuses %s and leaves the target alone", async (_label, target) => {
    const result = await harness.call("edit_file", {
      path: target,
      oldText: "outside",
      newText: "pwned",
    });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/outside the workspace|leaves the workspace/);
    expect(await readFile(path.join(harness.outside, "secret.txt"), "utf8")).toBe("outside secret");
  });

  it.each([
    ["a parent-relative path", "../outside/new.txt", "new.txt"],
    ["a symlinked folder", "escape/new.txt", "new.txt"],
    ["a new folder under a symlinked folder", "escape/deep/new.txt", "deep"],
    ["a dangling symlink", "dangling.txt", "not-yet.txt"],
  ] as const)("write_file refuses %s and creates nothing", async (_label, target, created) => {
    const result = await harness.call("write_file", { path: target, content: "pwned" });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/outside the workspace|leaves the workspace/);
    expect(await isPresent(path.join(harness.outside, created))).toBe(false);
  });

  it("write_file refuses an absolute path outside", async () => {
    const target = path.join(harness.outside, "abs.txt");
    const result = await harness.call("write_file", { path: target, content: "pwned" });
    expect(result.content).toMatch(/outside the workspace|leaves the workspace/);
    expect(await isPresent(target)).toBe(false);
  });

  it.each([
    ["the parent", ".."],
    ["an absolute path elsewhere", "/etc"],
    ["a symlinked folder", "escape"],
  ])("list_files refuses %s", async (_label, target) => {
    const result = await harness.call("list_files", { path: target });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/outside the workspace|leaves the workspace/);
  });

  it("refuses NUL bytes", async () => {
    const result = await harness.call("read_file", { path: "a\0b" });
    expect(result).toMatchObject({ isError: true, content: "paths cannot contain NUL bytes" });
  });

  it("accepts paths that stay inside, absolute or with harmless dots", async () => {
    await writeFile(workspaceFile("in.txt"), "inside");
    for (const target of [
      workspaceFile("in.txt"),
      "sub/../in.txt",
      "./in.txt",
      "..in.txt/../in.txt",
    ]) {
      const result = await harness.call("read_file", { path: target });
      expect(result).toMatchObject({ isError: false, content: "inside" });
    }
  });

  it("reads /workspace/… (the workspace as bash shows it) as the workspace, and nothing else as it", async () => {
    await writeFile(workspaceFile("in.txt"), "inside");
    expect(await harness.call("read_file", { path: "/workspace/in.txt" })).toMatchObject({
      isError: false,
      content: "inside",
    });
    expect((await harness.call("list_files", { path: "/workspace" })).content).toContain("in.txt");
    for (const target of [
      "/workspace/../etc/passwd",
      "/workspaces/in.txt",
      "/workspace-x/in.txt",
    ]) {
      const result = await harness.call("read_file", { path: target });
      expect(result, target).toMatchObject({ isError: true });
    }
  });

  it("follows symlinks that stay inside", async () => {
    await writeFile(workspaceFile("real.txt"), "real");
    await symlink(workspaceFile("real.txt"), workspaceFile("alias.txt"));
    const result = await harness.call("read_file", { path: "alias.txt" });
    expect(result).toMatchObject({ isError: false, content: "real" });
  });

  it("writes through no symlink, even inside: the gate and the rules judge the path as written", async () => {
    // A deny rule on .github/** judged `gh/ci.yml` and `notes.txt`; the writes landed in .github.
    await mkdir(workspaceFile(".github"));
    await writeFile(workspaceFile(".github/ci.yml"), "on: push\n");
    await symlink(workspaceFile(".github"), workspaceFile("gh"));
    await symlink(workspaceFile(".github/ci.yml"), workspaceFile("notes.txt"));
    const calls = [
      harness.call("write_file", { path: "gh/ci.yml", content: "pwned" }),
      harness.call("write_file", { path: "gh/new.yml", content: "pwned" }),
      harness.call("edit_file", { path: "notes.txt", oldText: "push", newText: "pwned" }),
    ];
    for (const result of await Promise.all(calls)) {
      expect(result).toMatchObject({ isError: true });
      expect(result.content).toMatch(/goes through a symbolic link to \.github\/(ci|new)\.yml/);
    }
    expect(await readFile(workspaceFile(".github/ci.yml"), "utf8")).toBe("on: push\n");
    expect(await isPresent(workspaceFile(".github/new.yml"))).toBe(false);
    // Refused before the gate was asked: no card shows the diff of a file under another name.
    expect(harness.client.callsTo("checkToolCall")).toEqual([]);
  });
});

describe("links and paths made to escape", () => {
  it("a symlink to / made by bash cannot be followed by any file tool", async () => {
    // Written as a script because the classifier refuses `ln -s /` typed out: the file tools must
    // hold even when a command the classifier cannot read made the links.
    await writeFile(
      workspaceFile("make-links.sh"),
      "ln -s / root && ln -s /etc etc-link && mkdir d && ln -s ../../.. d/up && ls -l\n",
    );
    const made = await harness.call("bash", { command: "bash make-links.sh" });
    expect(made.content).toMatch(/root -> \//);
    for (const [tool, args] of [
      ["read_file", { path: "root/etc/passwd" }],
      ["read_file", { path: "etc-link/passwd" }],
      ["read_file", { path: `d/up/${path.basename(harness.outside)}/secret.txt` }],
      ["list_files", { path: "root" }],
      ["list_files", { path: "root/" }],
      ["write_file", { path: "root/tmp/pwned.txt", content: "pwned" }],
      ["write_file", { path: "d/up/outside/pwned.txt", content: "pwned" }],
      ["edit_file", { path: "etc-link/hostname", oldText: "a", newText: "b" }],
    ] as const) {
      const result = await harness.call(tool, args);
      expect(result, `${tool} ${JSON.stringify(args)}`).toMatchObject({ isError: true });
      expect(result.content).toMatch(/outside the workspace|leaves the workspace/);
    }
    expect(await isPresent("/tmp/pwned.txt")).toBe(false);
    expect(await isPresent(path.join(harness.outside, "pwned.txt"))).toBe(false);
  });

  it("a symlink to a file outside, as the last component, is not opened", async () => {
    await symlink(path.join(harness.outside, "secret.txt"), workspaceFile("leak.txt"));
    const read = await harness.call("read_file", { path: "leak.txt" });
    expect(read).toMatchObject({ isError: true });
    expect(read.content).not.toContain("outside secret");
    await harness.call("write_file", { path: "leak.txt", content: "pwned" });
    expect(await readFile(path.join(harness.outside, "secret.txt"), "utf8")).toBe("outside secret");
  });

  it("a hard link to a file outside is refused by every tool, and nothing outside changes", async () => {
    await link(path.join(harness.outside, "secret.txt"), workspaceFile("hard.txt"));
    for (const [tool, args] of [
      ["read_file", { path: "hard.txt" }],
      ["write_file", { path: "hard.txt", content: "pwned" }],
      ["edit_file", { path: "hard.txt", oldText: "outside", newText: "pwned" }],
    ] as const) {
      const result = await harness.call(tool, args);
      expect(result).toMatchObject({ isError: true });
      expect(result.content).toContain("has other hard links");
      expect(result.content).not.toContain("outside secret");
    }
    expect(await readFile(path.join(harness.outside, "secret.txt"), "utf8")).toBe("outside secret");
  });

  it("refuses paths past the length limit, and names a path too long for the system", async () => {
    const tooLong = await harness.call("read_file", { path: "a".repeat(4_097) });
    expect(tooLong).toMatchObject({ isError: true });
    expect(tooLong.content).toContain("path: ");
    const longName = await harness.call("write_file", { path: "b".repeat(300), content: "x" });
    expect(longName).toMatchObject({ isError: true });
    expect(longName.content).toContain("the path is too long");
    expect(await readdir(harness.workspace)).toEqual(["dangling.txt", "escape"]);
  });
});

describe("edit_file", () => {
  it("refuses a file that is not UTF-8 text, which it could not write back byte for byte", async () => {
    // Red team: `caf\xE9` came back as `caf\uFFFD`, a change outside the approved edit.
    const bytes = Buffer.from("caf\xE9\nkey=1\n", "latin1");
    await writeFile(workspaceFile("latin1.conf"), bytes);
    const result = await harness.call("edit_file", {
      path: "latin1.conf",
      oldText: "key=1",
      newText: "key=2",
    });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("is not UTF-8 text");
    expect(await readFile(workspaceFile("latin1.conf"))).toEqual(bytes);
  });
});

describe("read_file", () => {
  it("reads a file", async () => {
    await writeFile(workspaceFile("hello.txt"), "héllo\n");
    expect((await harness.call("read_file", { path: "hello.txt" })).content).toBe("héllo\n");
  });

  it("truncates a large file and says so", async () => {
    await writeFile(workspaceFile("big.txt"), "a".repeat(MAX_READ_BYTES + 10));
    const { content } = await harness.call("read_file", { path: "big.txt" });
    expect(content.startsWith("a".repeat(MAX_READ_BYTES))).toBe(true);
    expect(content).toContain(`[truncated: the file is ${MAX_READ_BYTES + 10} bytes]`);
  });

  it("refuses a FIFO without waiting for a writer", async () => {
    execFileSync("mkfifo", [workspaceFile("pipe")]);
    const result = await harness.call("read_file", { path: "pipe" });
    expect(result).toMatchObject({ isError: true, content: "pipe is not a regular file" });
  });

  it("refuses a directory", async () => {
    await mkdir(workspaceFile("dir"));
    const result = await harness.call("read_file", { path: "dir" });
    expect(result).toMatchObject({ isError: true, content: "dir is a directory" });
  });
});

describe("list_files", () => {
  it("lists one level, sorted, directories with a slash", async () => {
    await mkdir(workspaceFile("src/deep"), { recursive: true });
    await writeFile(workspaceFile("src/deep/hidden.ts"), "");
    await writeFile(workspaceFile("b.txt"), "");
    await writeFile(workspaceFile("a.txt"), "");
    const { content } = await harness.call("list_files", {});
    expect(content.split("\n")).toEqual(["a.txt", "b.txt", "dangling.txt", "escape", "src/"]);
    expect((await harness.call("list_files", { path: "src" })).content).toBe("deep/");
  });

  it("caps a long listing", async () => {
    await mkdir(workspaceFile("many"));
    const count = MAX_LIST_ENTRIES + 7;
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        writeFile(workspaceFile(`many/f${String(i).padStart(4, "0")}`), ""),
      ),
    );
    const lines = (await harness.call("list_files", { path: "many" })).content.split("\n");
    expect(lines).toHaveLength(MAX_LIST_ENTRIES + 1);
    expect(lines.at(-1)).toBe("[truncated: 7 more entries]");
  });

  it("shows the first names in order whatever order the folder holds them in", async () => {
    // Read as a stream, keeping only the first names: a folder is not read whole.
    await mkdir(workspaceFile("mixed"));
    const names = Array.from({ length: 3 * MAX_LIST_ENTRIES }, (_, i) => `n${(i * 7919) % 10007}`);
    await Promise.all(names.map((name) => writeFile(workspaceFile(`mixed/${name}`), "")));
    await mkdir(workspaceFile("mixed/a-folder"));
    const lines = (await harness.call("list_files", { path: "mixed" })).content.split("\n");
    const expected = ["a-folder/", ...names].sort().slice(0, MAX_LIST_ENTRIES);
    expect(lines.slice(0, -1)).toEqual(expected);
    expect(lines.at(-1)).toBe(`[truncated: ${2 * MAX_LIST_ENTRIES + 1} more entries]`);
  });
});

describe("write_file", () => {
  it("write_file and edit_file do not grow a workspace over its quota; removing files brings them back", async () => {
    // Red team: five 1 MB writes went into a workspace already over its quota.
    await harness.cleanup();
    harness = await createHarness({ limits: { workspaceQuotaBytes: 1024 * 1024 } });
    expect(harness.sandbox).toMatchObject({ status: "sandboxed" });
    await writeFile(workspaceFile("notes.txt"), "key=1\n");
    await writeFile(workspaceFile("big.bin"), Buffer.alloc(2 * 1024 * 1024, 1));

    const write = await harness.call("write_file", { path: "more.txt", content: "x".repeat(1000) });
    const edit = await harness.call("edit_file", { path: "notes.txt", oldText: "1", newText: "2" });

    for (const result of [write, edit]) {
      expect(result.isError).toBe(true);
      expect(result.content).toContain("over its quota");
    }
    expect(await isPresent(workspaceFile("more.txt"))).toBe(false);
    execFileSync("rm", [workspaceFile("big.bin")]);
    expect((await harness.call("write_file", { path: "more.txt", content: "x" })).isError).toBe(
      false,
    );
  });

  it("keep to the quota without a sandbox too", async () => {
    await harness.cleanup();
    harness = await createHarness({
      bwrapPath: "/nonexistent/bwrap",
      limits: { workspaceQuotaBytes: 1024 * 1024 },
    });
    expect(harness.sandbox).toMatchObject({ status: "no_sandbox" });
    await writeFile(workspaceFile("big.bin"), Buffer.alloc(2 * 1024 * 1024, 1));
    const write = await harness.call("write_file", { path: "more.txt", content: "x" });
    expect(write.isError).toBe(true);
    expect(write.content).toContain("over its quota");
  });

  it("creates parent directories", async () => {
    const result = await harness.call("write_file", { path: "a/b/c.txt", content: "deep" });
    expect(result.isError).toBe(false);
    expect(await readFile(workspaceFile("a/b/c.txt"), "utf8")).toBe("deep");
  });

  it("refuses more than 1 MB, counted in bytes", async () => {
    const content = "é".repeat(MAX_WRITE_BYTES / 2 + 1);
    const result = await harness.call("write_file", { path: "big.txt", content });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("content: content is larger than 1 MB");
    expect(await isPresent(workspaceFile("big.txt"))).toBe(false);
  });

  it("tracks a batch until its last file lands", async () => {
    const batch = (index: number) => ({ id: "migrate", index, total: 3 });
    await harness.call("write_file", { path: "one.sql", content: "1", batch: batch(1) });
    const second = await harness.call("write_file", {
      path: "two.sql",
      content: "2",
      batch: batch(2),
    });
    expect(second.content).toBe("wrote 1 bytes to two.sql (batch 'migrate': file 2 of 3)");
    expect(harness.context.state.describeIncompleteBatch()).toBe(
      "mid-write: batch 'migrate' has 2 of 3 files written",
    );
    await harness.call("write_file", { path: "three.sql", content: "3", batch: batch(3) });
    expect(harness.context.state.describeIncompleteBatch()).toBeNull();
  });

  it("refuses a batch position that contradicts the batch, before writing", async () => {
    await harness.call("write_file", {
      path: "one.sql",
      content: "1",
      batch: { id: "m", index: 1, total: 2 },
    });
    const result = await harness.call("write_file", {
      path: "two.sql",
      content: "2",
      batch: { id: "m", index: 2, total: 5 },
    });
    expect(result).toMatchObject({
      isError: true,
      content: "batch 'm' was started with 2 files, not 5",
    });
    expect(await isPresent(workspaceFile("two.sql"))).toBe(false);
  });

  it("does not record a batch write that failed", async () => {
    await mkdir(workspaceFile("taken"));
    const result = await harness.call("write_file", {
      path: "taken",
      content: "x",
      batch: { id: "m", index: 1, total: 2 },
    });
    expect(result).toMatchObject({ isError: true, content: "taken is a directory" });
    expect(harness.context.state.describeIncompleteBatch()).toBeNull();
  });

  it("validates batch bounds", async () => {
    const result = await harness.call("write_file", {
      path: "x",
      content: "x",
      batch: { id: "m", index: 1, total: 101 },
    });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("batch.total");
  });
});

describe("edit_file", () => {
  beforeEach(async () => {
    await writeFile(workspaceFile("code.ts"), "const a = 1;\nconst b = 1;\n");
  });

  it("replaces text that occurs exactly once", async () => {
    const result = await harness.call("edit_file", {
      path: "code.ts",
      oldText: "const a = 1;",
      newText: "const a = 2;",
    });
    expect(result).toMatchObject({ isError: false, content: "edited code.ts" });
    expect(await readFile(workspaceFile("code.ts"), "utf8")).toBe("const a = 2;\nconst b = 1;\n");
  });

  it.each([
    ["= 1;", 2],
    ["const c", 0],
  ] as const)(
    "refuses %j, which occurs %i times, and leaves the file alone",
    async (oldText, n) => {
      const result = await harness.call("edit_file", { path: "code.ts", oldText, newText: "x" });
      expect(result).toMatchObject({
        isError: true,
        content: `oldText occurs ${n} times in code.ts; it must occur exactly once`,
      });
      expect(await readFile(workspaceFile("code.ts"), "utf8")).toBe("const a = 1;\nconst b = 1;\n");
    },
  );

  it("counts overlapping occurrences", async () => {
    await writeFile(workspaceFile("a.txt"), "aaa");
    const result = await harness.call("edit_file", { path: "a.txt", oldText: "aa", newText: "b" });
    expect(result.content).toContain("occurs 2 times");
  });

  it("inserts newText literally", async () => {
    await harness.call("edit_file", { path: "code.ts", oldText: "a = 1", newText: "a = '$&$1'" });
    expect(await readFile(workspaceFile("code.ts"), "utf8")).toContain("const a = '$&$1';");
  });

  it("refuses an empty oldText", async () => {
    const result = await harness.call("edit_file", { path: "code.ts", oldText: "", newText: "x" });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("oldText");
  });

  it("refuses a file too large to end at 1 MB without reading it whole", async () => {
    // Past V8's longest string: read whole, it failed with "Cannot create a string longer…".
    execFileSync("truncate", ["-s", "600M", workspaceFile("huge.log")]);
    const result = await harness.call("edit_file", {
      path: "huge.log",
      oldText: "a",
      newText: "b",
    });
    expect(result).toMatchObject({
      isError: true,
      content: "the edited huge.log would be larger than 1 MB",
    });
  }, 30_000);

  it("reports a missing file", async () => {
    const result = await harness.call("edit_file", { path: "nope.ts", oldText: "a", newText: "b" });
    expect(result).toMatchObject({ isError: true, content: "nope.ts does not exist" });
    expect(await readdir(harness.workspace)).not.toContain("nope.ts");
  });
});
