import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TestModule } from "vitest/node";
import RunningFilesReporter, { type RunningFile } from "./vitest-running-files";

const scratch = mkdtempSync(path.join(tmpdir(), "handshake-running-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the reporter of the vitest files that are running", () => {
  it("lists a file from its start to its end, and forgets an earlier run's files when it starts", () => {
    const file = path.join(scratch, "running.json");
    const running = () =>
      (JSON.parse(readFileSync(file, "utf8")) as RunningFile[]).map((entry) => entry.file);
    const moduleOf = (moduleId: string) => ({ moduleId }) as TestModule;

    const earlier = new RunningFilesReporter({ file });
    earlier.onTestModuleStart(moduleOf("/repo/tests/stalled.test.ts"));
    expect(running()).toEqual(["/repo/tests/stalled.test.ts"]);

    const reporter = new RunningFilesReporter({ file });
    reporter.onInit();
    expect(running()).toEqual([]);
    reporter.onTestModuleStart(moduleOf("/repo/tests/a.test.ts"));
    reporter.onTestModuleStart(moduleOf("/repo/tests/b.test.ts"));
    reporter.onTestModuleEnd(moduleOf("/repo/tests/a.test.ts"));
    expect(running()).toEqual(["/repo/tests/b.test.ts"]);
  });
});
