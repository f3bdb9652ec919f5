import { describe, expect, it } from "vitest";
import { BLOCK_END, BLOCK_START, replaceGeneratedBlock } from "./generated-block";

describe("replaceGeneratedBlock", () => {
  it("replaces only what lies between the markers and keeps the hand-written rest", () => {
    const document = [
      "# Reliability",
      "",
      BLOCK_START,
      "old figures",
      BLOCK_END,
      "",
      "## Known issues",
      "- written by a person",
      "",
    ].join("\n");
    const updated = replaceGeneratedBlock(document, "new figures", "# Reliability");
    expect(updated).toContain("new figures");
    expect(updated).not.toContain("old figures");
    expect(updated.endsWith("## Known issues\n- written by a person\n")).toBe(true);
    expect(replaceGeneratedBlock(updated, "new figures", "# Reliability")).toBe(updated);
  });

  it("adds the markers under the title of a document that has none, and creates a new one", () => {
    const updated = replaceGeneratedBlock("# R\n\n## Known issues\n", "figures", "# R");
    expect(updated.split("\n").slice(0, 3)).toEqual(["# R", "", BLOCK_START]);
    expect(updated).toContain("## Known issues");
    expect(replaceGeneratedBlock("", "figures", "# R")).toContain(`figures\n\n${BLOCK_END}`);
  });

  it("refuses to guess when one marker is missing", () => {
    expect(() => replaceGeneratedBlock(`# R\n${BLOCK_START}\nx\n`, "y", "# R")).toThrow(/markers/);
  });

  it("fences each document with its own markers and leaves another document's alone", () => {
    const markers = { start: "<!-- api start -->", end: "<!-- api end -->" };
    const document = `# API\n\n${BLOCK_START}\nfigures\n${BLOCK_END}\n`;
    const updated = replaceGeneratedBlock(document, "routes", "# API", markers);
    expect(updated).toContain(`${markers.start}\n\nroutes\n\n${markers.end}`);
    expect(updated).toContain(`${BLOCK_START}\nfigures\n${BLOCK_END}`);
    expect(replaceGeneratedBlock(updated, "routes", "# API", markers)).toBe(updated);
  });
});
