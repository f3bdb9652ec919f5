import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { TextAreaField } from "./text-area-field";
import { TextField } from "./text-field";

const REVERSED = "e2e \u202Ereviewer";

function describedIds(html: string): string[] {
  return /aria-describedby="([^"]*)"/.exec(html)?.[1]?.split(" ") ?? [];
}

describe("a field whose value would not read as what it is", () => {
  it("warns under a text field and a text area, escaped, and names the warning as the field's description", () => {
    for (const html of [
      renderToStaticMarkup(<TextField label="Role" value={REVERSED} readOnly />),
      renderToStaticMarkup(
        <TextAreaField label="Prompt" value={REVERSED} readOnly hint="Optional" />,
      ),
    ]) {
      expect(html).toContain('aria-label="Display warnings"');
      expect(html).toContain("e2e <span");
      expect(html).toContain("⟨U+202E⟩");
      const ids = describedIds(html);
      expect(ids.length).toBeGreaterThan(0);
      expect(html).toContain(`<div id="${ids.at(-1)}"`);
    }
  });

  it("says nothing of a plain value, and never shows a password", () => {
    const plain = renderToStaticMarkup(<TextField label="Role" value="reviewer" readOnly />);
    expect(plain).not.toContain("Display warnings");
    expect(describedIds(plain)).toEqual([]);
    const password = renderToStaticMarkup(
      <TextField label="Password" type="password" value={REVERSED} readOnly />,
    );
    expect(password).not.toContain("Display warnings");
    expect(password).not.toContain("⟨U+202E⟩");
  });
});
