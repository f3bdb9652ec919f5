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

  it("renders an image as a link to it, without a referrer", () => {
    const html = render("![diagram](https://example.com/d.png)");
    expect(html).toContain('href="https://example.com/d.png"');
    expect(html).toContain("noreferrer");
    expect(html).toContain("[image: diagram]");
  });

  it("does not turn a javascript: image into a live link", () => {
    const html = render("![x](javascript:alert(1))");
    expect(html).not.toContain("javascript:");
  });
});
