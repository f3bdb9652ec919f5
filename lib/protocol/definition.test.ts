import { describe, expect, it } from "vitest";
import { summaryOf } from "./definition";

describe("summaryOf", () => {
  const grin = "\u{1F600}";

  it("keeps the first 200 UTF-16 units of a text", () => {
    expect(summaryOf("a short plan")).toBe("a short plan");
    expect(summaryOf("a".repeat(250))).toBe("a".repeat(200));
    expect(summaryOf("a".repeat(198) + grin + "b")).toBe("a".repeat(198) + grin);
  });

  it("never leaves half a character where it cuts", () => {
    const summary = summaryOf("a".repeat(199) + grin);
    expect(summary).toBe("a".repeat(199));
    expect(summary).not.toMatch(/[\uD800-\uDFFF]/);
  });
});
