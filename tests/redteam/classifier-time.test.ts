import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const TOOL_RISK = JSON.stringify(
  path.join(import.meta.dirname, "../../lib/shared/protocol/tool-risk.ts"),
);

/**
 * Classifies each command in a process of its own, with a deadline: a classifier that takes
 * seconds holds the thread of whoever asks (the server at `POST /tool-calls`, before any other
 * check; the worker's gate; the hook), so these run where a stall can be stopped.
 */
function classifyWithDeadline(commands: string[], deadlineMs: number) {
  const script = `
    const { classifyToolCall } = await import(${TOOL_RISK});
    const commands = ${JSON.stringify(commands)};
    const classes = [];
    for (const command of commands) classes.push((await classifyToolCall("bash", { command })).class);
    console.log(JSON.stringify(classes));
  `;
  return spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: deadlineMs,
  });
}

describe("commands made to take the classifier's time (red team)", () => {
  it("a sed script with a long run of unclosed backslashes", () => {
    // Its regexes read each backslash two ways: 40 of them took 8 s, each more ×1.6.
    const run = "\\".repeat(60);
    const classified = classifyWithDeadline(
      [`sed 's/${run}' f`, `sed '/${run}' f`, `sed -e 's/a/${run}' f`],
      10_000,
    );
    expect(classified.signal, `killed at the deadline: ${classified.stderr}`).toBeNull();
    expect(JSON.parse(classified.stdout)).toEqual([
      "needs_approval",
      "needs_approval",
      "needs_approval",
    ]);
  }, 20_000);

  it("a pipeline of thousands of stages, and statements nested deep", () => {
    // Looking up each statement's pipe and joiner through the parse tree's parents cost the square
    // of the stages: 10,000 characters of `a|a|…` took 9–10 s, 190 nested braces 6.5 s.
    const nested = `${"{ ".repeat(190)}${"a\n".repeat(100)}${"; }".repeat(190)}`;
    const classified = classifyWithDeadline(
      [`${"a|".repeat(4_999)}a`, `${"a |".repeat(3_333)}a`, nested],
      8_000,
    );
    expect(classified.signal, `killed at the deadline: ${classified.stderr}`).toBeNull();
    expect(JSON.parse(classified.stdout)).toHaveLength(3);
  }, 30_000);

  it("a command past the parser's length leaves the parser whole: the next command is judged", () => {
    // 40,000 characters of `a|a|…|` ran the parser's error recovery out of memory: it aborted,
    // and its WebAssembly module stayed dead, so every later command of every agent threw.
    const classified = classifyWithDeadline([`${"a|".repeat(20_000)}`, "ls"], 15_000);
    expect(classified.signal, `killed at the deadline: ${classified.stderr}`).toBeNull();
    expect(classified.stderr).not.toContain("Aborted");
    expect(JSON.parse(classified.stdout)).toEqual(["needs_approval", "read_only"]);
  }, 30_000);
});
