import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ScopeText, describeScope } from "./scope-text";

// A connected session's role is its subagent's type and its directory the session's own.
const ROLE = "reviewer\u202Eesrever\u200B";
const CWD = "/home/ada/\u2066src\u2069";

describe("a rule's scope", () => {
  it("shows a role's and a directory's hidden characters as escapes, on the page and in labels", () => {
    for (const [scope, escapes] of [
      [{ kind: "role", role: ROLE } as const, ["⟨U+202E⟩", "⟨U+200B⟩"]],
      [{ kind: "project", cwd: CWD } as const, ["⟨U+2066⟩", "⟨U+2069⟩"]],
    ] as const) {
      const html = renderToStaticMarkup(<ScopeText scope={scope} />);
      const label = describeScope(scope);
      for (const shown of [html, label]) {
        for (const escape of escapes) expect(shown).toContain(escape);
        expect(shown).not.toMatch(/[\u202E\u200B\u2066\u2069]/);
      }
      expect(html).toContain('data-segment="escape"');
    }
    expect(describeScope({ kind: "role", role: ROLE })).toBe("reviewer⟨U+202E⟩esrever⟨U+200B⟩s");
  });

  it("names an agent, a token and everyone as plain words", () => {
    expect(renderToStaticMarkup(<ScopeText scope={{ kind: "agent", agent: "ada-1" }} />)).toBe(
      "agent ada-1",
    );
    expect(describeScope({ kind: "token", tokenId: "0123456789abcdef" })).toBe(
      "sessions of token 01234567",
    );
    expect(describeScope({ kind: "everyone" })).toBe("everyone");
  });
});
