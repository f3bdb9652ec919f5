import { createHash } from "node:crypto";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { FileDiff, FileDiffDisclosure } from "./file-diff";

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

function render(file: Record<string, unknown> | undefined, tool = "write_file") {
  return renderToStaticMarkup(
    <FileDiff payload={{ tool, args: { path: "src/app.ts" }, ...(file ? { file } : {}) }} />,
  );
}

const before = "const a = 1;\nconst b = 2;\n";
const after = "const a = 1;\nconst b = 3;\n";

describe("FileDiff", () => {
  it("shows a unified diff whose +/− lines say what they are in text, not colour alone", () => {
    const html = render({ path: "src/app.ts", baseHash: sha256(before), before, after });
    expect(html).toContain("Changes to");
    expect(html).toContain("@@ -1,2 +1,2 @@");
    expect(html).toMatch(/data-diff-line="removed".*?<span class="sr-only">removed<\/span>/);
    expect(html).toMatch(/data-diff-line="added".*?<span class="sr-only">added<\/span>/);
    expect(html).toContain("1 line added, 1 line removed");
    // Highlighted as TypeScript, from the extension.
    expect(html).toContain('<span class="hljs-keyword">const</span>');
    expect(html).toContain('<span class="hljs-number">3</span>');
  });

  it("never renders the file's text as HTML", () => {
    const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>\n';
    for (const path of ["page.html", "notes.txt"]) {
      const html = renderToStaticMarkup(
        <FileDiff
          payload={{
            tool: "Write",
            args: { file_path: path },
            file: { path, baseHash: "absent", before: "", after: hostile },
          }}
        />,
      );
      expect(html).not.toContain("<img");
      expect(html).not.toContain("<script");
      expect(html).toContain("&lt;");
    }
  });

  it("shows hidden and right-to-left characters as escapes, with a warning", () => {
    const tricky = "if (isAdmin) { /* \u202e } \u2066 if (true) */ grant(); }\n";
    const html = render({ path: "src/app.ts", baseHash: "absent", before: "", after: tricky });
    expect(html).toContain("U+202E");
    expect(html).not.toContain("\u202e");
    expect(html).toContain("hidden characters");
  });

  it("names the file as its heading shows it: a path's hidden characters are escaped everywhere", () => {
    // Red team: the region's name and the table's caption held a path's U+202E raw.
    const path = "src/\u202Esj.gifnoc";
    const html = render({ path, baseHash: "absent", before: "", after: "x\n" });
    expect(html).toContain('aria-label="Changes to src/⟨U+202E⟩sj.gifnoc"');
    expect(html).not.toContain("\u202e");
  });

  it("says a new file is new, and why a change is not shown", () => {
    expect(render({ path: "src/app.ts", baseHash: "absent", before: "", after: "x\n" })).toContain(
      "new file",
    );
    const large = render({
      path: "src/app.ts",
      baseHash: sha256("x"),
      unshown: { reason: "too_large", detail: "the two sides are 300000 bytes" },
    });
    expect(large).toContain("The change is too large to show: the two sides are 300000 bytes");
    expect(large).not.toContain("<table");
    const sly = render({
      path: "src/app.ts",
      baseHash: sha256("x"),
      unshown: { reason: "too_large", detail: "big \u202e gnirts" },
    });
    expect(sly).toContain("U+202E");
    expect(sly).not.toContain("\u202e");
  });

  it("warns when a file-writing call came without its file, and is silent for other tools", () => {
    expect(render(undefined)).toContain("No diff");
    expect(render(undefined, "bash")).toBe("");
  });

  it("puts the diff behind a disclosure in history, and nothing for a call without a file", () => {
    const payload = {
      tool: "write_file",
      args: { path: "src/app.ts" },
      file: { path: "src/app.ts", baseHash: sha256(before), before, after },
    };
    const html = renderToStaticMarkup(<FileDiffDisclosure payload={payload} />);
    expect(html).toContain("<details");
    expect(html).toContain("Show the diff of");
    expect(html).toContain('data-diff-line="added"');
    expect(renderToStaticMarkup(<FileDiffDisclosure payload={{ tool: "bash" }} />)).toBe("");
  });
});
