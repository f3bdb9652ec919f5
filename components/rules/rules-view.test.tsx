import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { RuleViewWire } from "@/lib/shared/api/rule";
import { RuleRow } from "./rules-view";

// Writes refuse such a pattern now; a rule stored before that still shows on the page.
const STORED_BEFORE: RuleViewWire = {
  id: "0b6f7a52-4a7e-4c4e-9d57-2f8f0c1d2e3f",
  pattern: "Bash(git status\u2060*)",
  effect: "allow",
  scope: { kind: "everyone" },
  mode: "enforce",
  requiredApprovals: 1,
  expiresAt: null,
  createdBy: "ada@example.com",
  createdAt: "2026-12-01T10:00:00.000Z",
};

function renderRow(rule: RuleViewWire): string {
  return renderToStaticMarkup(
    <QueryClientProvider client={new QueryClient()}>
      <table>
        <tbody>
          <RuleRow rule={rule} canEdit now={Date.parse("2026-12-07T00:00:00Z")} />
        </tbody>
      </table>
    </QueryClientProvider>,
  );
}

describe("a rule's row", () => {
  it("shows a hidden character in its pattern as an escape, in the cell and in every control's name", () => {
    const html = renderRow(STORED_BEFORE);
    expect(html).not.toContain("\u2060");
    expect(html).toContain('data-segment="escape"');
    expect(html).toContain('aria-label="Delete rule Bash(git status⟨U+2060⟩*) for everyone"');
    expect(html).toContain('aria-label="Effect of rule Bash(git status⟨U+2060⟩*) for everyone"');
  });
});
