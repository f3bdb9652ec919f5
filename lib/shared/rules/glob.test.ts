import { describe, expect, it } from "vitest";
import { ANY_ONE, ANY_RUN, matchesGlob, matchesText, textGlob } from "./glob";

/** The RegExp a text glob used to compile to: the oracle the linear matcher must agree with. */
function oracle(pattern: string, wildcards: Record<string, string>): RegExp {
  let source = "";
  for (let index = 0; index < pattern.length; index += 1) {
    const unit = pattern.charAt(index);
    const next = pattern.charAt(index + 1);
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    if (unit === "\\" && next !== "" && wildcards[next] !== undefined) {
      source += escape(next);
      index += 1;
    } else {
      source += wildcards[unit] ?? escape(unit);
    }
  }
  return new RegExp(`^${source}$`, "s");
}

/** A small deterministic generator, so a failure names inputs that can be run again. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return (alphabet: string, maxLength: number) =>
    Array.from({ length: Math.floor(next() * (maxLength + 1)) }, () =>
      alphabet.charAt(Math.floor(next() * alphabet.length)),
    ).join("");
}

describe("linear glob matching", () => {
  it("agrees with the RegExp it replaced on 20,000 random patterns and texts", () => {
    const draw = generator(7);
    const disagreements: string[] = [];
    for (let round = 0; round < 20_000; round += 1) {
      const pattern = draw("ab*?\\ \n", 7);
      const text = draw("ab*?\\ \n", 9);
      const expected = oracle(pattern, { "*": ".*", "?": "." }).test(text);
      const actual = matchesText(textGlob(pattern, { "*": ANY_RUN, "?": ANY_ONE }), text);
      if (actual !== expected) disagreements.push(JSON.stringify({ pattern, text, expected }));
    }
    expect(disagreements).toEqual([]);
  });

  it("matches runs of any elements, not only characters", () => {
    const isSame = (literal: number, element: number) => literal === element;
    expect(matchesGlob([1, ANY_RUN, 3], [1, 2, 2, 3], isSame)).toBe(true);
    expect(matchesGlob([1, ANY_ONE, 3], [1, 2, 2, 3], isSame)).toBe(false);
    expect(matchesGlob([ANY_RUN], [], isSame)).toBe(true);
    expect(matchesGlob([ANY_ONE], [], isSame)).toBe(false);
  });
});
