import { execFileSync } from "node:child_process";
import { existsSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { prepareBaseline } from "../bench/baseline";

const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
let baselineDir: string | undefined;

afterAll(() => {
  if (baselineDir) rmSync(baselineDir, { recursive: true, force: true });
});

describe("the bench's unpacked baseline", () => {
  it("links this checkout's node_modules, also over a dangling link another checkout left", () => {
    baselineDir = prepareBaseline(commit);
    const link = path.join(baselineDir, "node_modules");
    expect(readlinkSync(link)).toBe(path.resolve("node_modules"));

    // What a run from a worktree since removed leaves behind.
    rmSync(link);
    symlinkSync(path.join(baselineDir, "gone", "node_modules"), link);
    expect(existsSync(link)).toBe(false);

    expect(prepareBaseline(commit)).toBe(baselineDir);
    expect(readlinkSync(link)).toBe(path.resolve("node_modules"));
    expect(existsSync(path.join(link, "vitest"))).toBe(true);
  });
});
