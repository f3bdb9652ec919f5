import { describe, expect, it } from "vitest";
import { cutText } from "./cut";

describe("cutText", () => {
  const grin = "\u{1F600}";

  it("keeps the first units of a text, a character that fits whole", () => {
    expect(cutText("short", 10)).toBe("short");
    expect(cutText("abcdef", 3)).toBe("abc");
    expect(cutText(`ab${grin}c`, 4)).toBe(`ab${grin}`);
  });

  it("drops the half of a character the cut would leave", () => {
    expect(cutText(`ab${grin}`, 3)).toBe("ab");
    expect(() => encodeURIComponent(cutText(`ab${grin}`, 3))).not.toThrow();
  });
});
