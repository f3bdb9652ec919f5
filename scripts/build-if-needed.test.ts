import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readBuildState } from "./build-if-needed";

let distDir: string | undefined;
afterEach(async () => {
  if (distDir) await rm(distDir, { recursive: true, force: true });
});

describe("readBuildState", () => {
  it("tells a missing, a stale and a current build apart by the sources' times", async () => {
    distDir = await mkdtemp(path.join(tmpdir(), "handshake-build-"));
    expect(readBuildState(distDir)).toBe("missing");
    const buildId = path.join(distDir, "BUILD_ID");
    await writeFile(buildId, "test");
    await utimes(buildId, new Date(0), new Date(0));
    expect(readBuildState(distDir)).toBe("stale");
    const future = new Date(Date.now() + 86_400_000);
    await utimes(buildId, future, future);
    expect(readBuildState(distDir)).toBe("current");
  });
});
