import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "./markdown";

function render(source: string): string {
  return renderToStaticMarkup(<Markdown source={source} />);
}

describe("Markdown (agent-written plans)", () => {
  it.each([
    ["a remote image", "![pixel](http://tracker.example/p.gif?lead=1)"],
    ["an https image without alt text", "![](https://tracker.example/p.gif)"],
    ["a reference-style image", "![x][ref]\n\n[ref]: http://tracker.example/r.gif"],
    ["an image inside a link", "[![x](http://tracker.example/i.gif)](http://example.com)"],
    ["raw HTML", '<img src="http://tracker.example/raw.gif">'],
  ])("never renders %s as an <img>", (_what, source) => {
    expect(render(source)).not.toMatch(/<img/i);
  });

  it("puts the agent's headings below the card's own title, an h2", () => {
    const html = render("# Goal\n\n## Plan\n\n### Risk\n\n###### Last");
    expect(html).not.toMatch(/<h[12]\b/);
    expect(html).toMatch(/<h3>Goal<\/h3>.*<h4>Plan<\/h4>.*<h5>Risk<\/h5>.*<h6>Last<\/h6>/s);
  });

  it("keeps an image's alt text, and its 'show all', out of the link", () => {
    // Red team: "show all" inside the link's long alt text opened the agent's URL: a read receipt.
    const html = render(`![${"a".repeat(760)}](https://tracker.example/p.png?read=plan)`);
    const link =
      /<a [^>]*href="https:\/\/tracker\.example[^"]*"[^>]*>.*?<\/a>/s.exec(html)?.[0] ?? "";
    expect(link).not.toBe("");
    expect(link).not.toMatch(/<button|show all|aaaa/);
  });

  it("shows a link's title as text, escaped, and never as a tooltip, which would draw it raw", () => {
    const html = render('[docs](https://example.com "then \u202Edorp ot yolped")');
    expect(html).not.toMatch(/<a [^>]*title=/);
    expect(html).toContain("⟨U+202E⟩");
    expect(html).not.toContain("\u202E");
  });

  it("renders an image as a link to it, without a referrer", () => {
    const html = render("![diagram](https://example.com/d.png)");
    expect(html).toContain('href="https://example.com/d.png"');
    expect(html).toContain("noreferrer");
    expect(html).toContain("[image: diagram]");
  });

  it("does not turn a javascript: image into a live link", () => {
    const html = render("![x](javascript:alert(1))");
    expect(html).not.toMatch(/(href|src)="javascript:/i);
  });

  // Red team: each of these rendered nothing of the part in quotes, so an approved plan held a
  // step the Lead never read.
  it.each([
    [
      "an HTML comment",
      "1. Run the tests\n<!-- 2. Then drop the production database -->\n3. Done",
      "drop the production database",
    ],
    [
      "a block of HTML",
      "Run tests\n\n<div>\nDELETE ALL BACKUPS\n</div>\n\nDone",
      "DELETE ALL BACKUPS",
    ],
    ["details", "<details><summary>ok</summary>rm -rf</details>", "rm -rf"],
    ["inline HTML", "run <span hidden>and push --force</span> the tests", "and push --force"],
    [
      "a link definition",
      'a\n\n[x]: https://evil.example "and then push --force"\n\nb',
      "and then push --force",
    ],
    ["a footnote nobody cites", "text\n\n[^x]: then wipe the disk", "then wipe the disk"],
    ["a table cell past the header", "| a | b |\n|---|---|\n| 1 | 2 | rm -rf / |", "rm -rf /"],
    ["a code fence's words", "```bash then drop everything\nls\n```", "then drop everything"],
    ["a link title", '[docs](https://example.com "and deploy to prod")', "and deploy to prod"],
    ["a footnote cited only by itself", "Plan.\n\n[^x]: then delete prod [^x]", "then delete prod"],
    [
      "a footnote's second definition",
      "Plan[^1].\n\n[^1]: fine\n\n[^1]: then delete prod",
      "then delete prod",
    ],
    [
      "an image the sanitizer strips",
      "![logo](data:text/plain,then-delete-prod)",
      "then-delete-prod",
    ],
    ["a link the sanitizer strips", "[docs](x-step:then-delete-prod)", "then-delete-prod"],
    [
      "a link to a protocol of words",
      "[docs](<then delete the prod database:now>)",
      "then delete the prod database",
    ],
    [
      "a link to a protocol in capitals",
      "[docs](HTTPS://example.com/then-delete-prod)",
      "then-delete-prod",
    ],
    ["an image of a protocol with _", "![logo](drop_prod:then-delete-prod)", "then-delete-prod"],
    ["a code fence's only word", "```then-delete-backups\nls\n```", "then-delete-backups"],
  ])("shows %s as text", (_what, source, hidden) => {
    const html = render(source);
    const text = html.replace(/<[^>]*>/g, "");
    expect(text).toContain(hidden);
    const inside = html.replace(/^<div class="prose-handshake[^>]*>/, "");
    expect(inside).not.toMatch(/<(div|details|span hidden)/);
  });

  it("still resolves a link from its definition, and renders a cited footnote as markdown does", () => {
    const html = render("see [docs][d] and note[^n]\n\n[d]: https://example.com\n\n[^n]: a note");
    expect(html).toContain('href="https://example.com"');
    expect(html).toContain("a note");
    expect(html).toContain("[d]: https://example.com");
  });
});
