import { describe, expect, it } from "vitest";
import { isSettled, rssPerLongPollKiB, sampleSettledRssMiB, settledMiB } from "../bench/rss";

describe("settled RSS (bench/rss.ts)", () => {
  it("is the median of a window, so one collection's spike or dip does not move it", () => {
    expect(settledMiB([600, 600, 640, 600, 600])).toBe(600);
    expect(settledMiB([600, 600, 560, 600, 600])).toBe(600);
  });

  it("ignores readings that failed and refuses a window with none", () => {
    expect(settledMiB([Number.NaN, 601, 602, 603])).toBe(602);
    expect(() => settledMiB([Number.NaN])).toThrow(/no RSS reading/);
  });

  it("divides what the long-polls added, settled both sides, by how many are open", () => {
    const idleMiB = [600, 612, 600, 600, 590];
    // 1,000 long-polls that add 10 MiB, with a collection mid-window on each side.
    const withLongPollsMiB = [610, 610, 640, 610, 605];
    expect(rssPerLongPollKiB({ idleMiB, withLongPollsMiB, longPolls: 1_000 })).toBeCloseTo(
      10.24,
      5,
    );
  });

  it("can be negative: a collection between the windows is reported, not hidden", () => {
    expect(
      rssPerLongPollKiB({ idleMiB: [610, 610, 610], withLongPollsMiB: [600, 600], longPolls: 10 }),
    ).toBeCloseTo(-1024, 5);
  });

  it("refuses to divide by no long-polls", () => {
    expect(() => rssPerLongPollKiB({ idleMiB: [1], withLongPollsMiB: [1], longPolls: 0 })).toThrow(
      /no long-poll/,
    );
  });

  it("is not settled while V8 is still giving heap back, and is once two windows agree", () => {
    const shrinking = [700, 698, 694, 690, 686, 682, 678, 674];
    expect(isSettled(shrinking, 4)).toBe(false);
    expect(isSettled([...shrinking, 671, 671, 670, 671, 671, 670, 671, 671], 4)).toBe(true);
    // One spike in a flat stretch does not unsettle it; a step beyond the tolerance does.
    expect(isSettled([670, 670, 690, 670, 670, 670, 670, 670], 4)).toBe(true);
    expect(isSettled([670, 670, 670, 670, 672, 672, 672, 672], 4)).toBe(false);
    expect(isSettled([670, 670, 670], 4)).toBe(false);
  });

  it("reads until RSS settles and returns the last window", async () => {
    const readings = [700, 690, 680, 670, 660, 650, 650, 650, 650, 650, 650, 650];
    let next = 0;
    const read = () => Promise.resolve(readings[next++] ?? 650);
    const window = await sampleSettledRssMiB(read, { window: 3, intervalMs: 1 });
    expect(window).toEqual([650, 650, 650]);
    // The shrinking start was read and passed over, not counted.
    expect(next).toBeGreaterThanOrEqual(8);
  });

  it("gives up after its longest wait and returns what it has", async () => {
    let next = 0;
    const read = () => Promise.resolve((next += 10));
    const window = await sampleSettledRssMiB(read, { window: 2, intervalMs: 5, maxWaitMs: 30 });
    expect(window).toHaveLength(2);
    expect(window[1]).toBe(next);
  });
});
