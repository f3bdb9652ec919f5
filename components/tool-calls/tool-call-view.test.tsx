import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { classifyToolCall } from "@/lib/shared/protocol/tool-risk";
import { ToolCallView } from "./tool-call-view";

async function storedPayload(command: string) {
  const args = { command };
  const risk = JSON.parse(JSON.stringify(await classifyToolCall("bash", args))) as unknown;
  return { tool: "bash", args, risk };
}

describe("ToolCallView", () => {
  it("shows the part a reason is about when it is in no command's line, however long the call", async () => {
    // A red-team card: the damage sat in a for list, in the collapsed middle of the arguments.
    const filler = `echo ${"a".repeat(400)}`;
    const command = `git push origin main && ${filler}\nfor i in \${x@P}; do ls; done\n${filler}`;
    const html = renderToStaticMarkup(<ToolCallView payload={await storedPayload(command)} />);
    const reasons = /<ul aria-label="Why it is risky".*?<\/ul>/s.exec(html)?.[0] ?? "";
    expect(reasons).toContain("expands a value as a prompt");
    expect(reasons).toContain("${x@P}");
  });
});
