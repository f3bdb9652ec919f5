import { describe, expect, it } from "vitest";
import { formatAge, formatClock } from "./use-now";

describe("time formatting", () => {
  it.each([
    [0, "0:00"],
    [4 * 60_000 + 12_000, "4:12"],
    [3_723_000, "1:02:03"],
    [-5_000, "0:00"],
  ])("formatClock(%i) = %s", (ms, expected) => {
    expect(formatClock(ms)).toBe(expected);
  });

  it.each([
    [12_000, "12s"],
    [5 * 60_000, "5m"],
    [3 * 3_600_000, "3h"],
    [2 * 86_400_000, "2d"],
  ])("formatAge(%i) = %s", (ms, expected) => {
    expect(formatAge(ms)).toBe(expected);
  });
});
