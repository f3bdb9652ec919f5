import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { runSteps, summaryLines } from "./test-steps";

const scratch = mkdtempSync(path.join(tmpdir(), "handshake-steps-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The steps' lines and their commands' output, kept out of the test run's own. */
function quietly() {
  const lines: string[] = [];
  const output = new PassThrough();
  output.resume();
  return { lines, log: (line: string) => lines.push(line), output };
}

/** A step that stalls on its first run and passes on the next, as a wedged runner would. */
function stallsOnce(name: string) {
  const marker = path.join(scratch, name);
  return {
    name,
    command: ["sh", "-c", `[ -e ${marker} ] && echo fine || { touch ${marker}; sleep 600; }`],
    mayStall: true as const,
  };
}

describe("npm test's steps", () => {
  it("run a stalled step once more from the start, and pass it when that run ends well", async () => {
    let described = 0;
    const { lines, log, output } = quietly();
    const summary = await runSteps([stallsOnce("wedged-once")], {
      env: process.env,
      stallAfterMs: 500,
      log,
      output,
      describe: () => Promise.resolve(`description ${++described}`),
    });
    expect(described).toBe(1);
    expect(lines).toContain("=== wedged-once: running it once more, from the start");
    expect(lines.join("\n")).toMatch(/STALLED, printed nothing for \d+ s;.*\ndescription 1/);
    expect(summary.failedSteps).toEqual([]);
    expect(summaryLines(summary)).toEqual([
      "Stalls:",
      "  wedged-once: stalled, then ran to its end",
      "0 passed, 0 failed, 0 skipped",
    ]);
  });

  it("fail a step that stalls twice, and go on to the next", async () => {
    const summary = await runSteps(
      [
        { name: "hangs", command: ["sh", "-c", "sleep 600"], mayStall: true },
        { name: "after", command: ["true"] },
      ],
      { env: process.env, stallAfterMs: 500, ...quietly() },
    );
    expect(summaryLines(summary)).toEqual([
      "Stalls:",
      "  hangs: stalled, and stalled again",
      "Failed steps: hangs",
      "0 passed, 1 failed, 0 skipped",
    ]);
  });

  it("leave a quiet step alone when it is not one that may stall", async () => {
    const summary = await runSteps([{ name: "quiet", command: ["sh", "-c", "sleep 1.5"] }], {
      env: process.env,
      stallAfterMs: 500,
      ...quietly(),
    });
    expect(summaryLines(summary)).toEqual(["0 passed, 0 failed, 0 skipped"]);
  });
});
