import { describe, expect, it } from "vitest";
import { classifyShellCommand, type ToolRisk } from "../shared/protocol/tool-risk";
import { loadShellParser } from "../shared/protocol/shell-command";
import { MAX_STORED_RISK_LENGTH, toRecordedRisk, toStoredRisk } from "./stored-risk";

await loadShellParser();

function reason(cls: ToolRisk["class"], message: string, start = 0) {
  return { class: cls, message, span: { start, end: start + 1 } };
}

describe("toStoredRisk", () => {
  it("keeps an ordinary judgement whole, parse included", () => {
    const risk = classifyShellCommand("git status && rm -rf build");
    expect(toStoredRisk(risk)).toEqual(JSON.parse(JSON.stringify(risk)));
    expect(toStoredRisk(risk)).toHaveProperty("analysis");
  });

  it("past the bound, drops the parse, then keeps one of each kind, higher classes first", () => {
    const many = Array.from({ length: 3_000 }, (_, index) =>
      reason("workspace", "a is not on the read-only list", index * 2),
    );
    const risk: ToolRisk = {
      class: "refused",
      code: "PATH_OUTSIDE_WORKSPACE",
      isBeyondAllowRules: true,
      reasons: [
        ...many,
        reason("needs_approval", "$(…) runs a command", 7),
        reason("refused", "the path /etc/x is outside the workspace", 9),
      ],
      analysis: classifyShellCommand("a;".repeat(2_000)).analysis,
    };
    const stored = toStoredRisk(risk) as unknown as ToolRisk;
    expect(JSON.stringify(stored).length).toBeLessThanOrEqual(MAX_STORED_RISK_LENGTH);
    expect(stored).not.toHaveProperty("analysis");
    expect(stored).toMatchObject({
      class: "refused",
      code: "PATH_OUTSIDE_WORKSPACE",
      isBeyondAllowRules: true,
    });
    expect(stored.reasons.slice(0, 3).map((kept) => kept.message)).toEqual([
      "the path /etc/x is outside the workspace",
      "$(…) runs a command",
      "a is not on the read-only list",
    ]);
    const notes = stored.reasons.slice(-2);
    expect(notes.map((note) => note.class)).toEqual(["refused", "refused"]);
    expect(notes[0]?.message).toBe(
      "the command's parse is not kept with this card (over 65,536 characters): read the command whole",
    );
    const kept = stored.reasons.length - 2;
    expect(notes[1]?.message).toBe(
      `${(3_002 - kept).toLocaleString("en-US")} more reasons are not kept with this card, of the 3,002 the gate gave`,
    );
  });

  it("a recorded call keeps the class and its reasons, never the parse", () => {
    const risk = classifyShellCommand("git push");
    expect(toRecordedRisk(risk)).toEqual({ class: risk.class, reasons: risk.reasons });
  });
});
