import { afterEach, describe, expect, it, vi } from "vitest";
import { onServerClockSet, serverNowMs, setServerClock } from "./server-clock";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the server's clock in a tab", () => {
  it("follows the server's reading, not the computer's clock, and tells its listeners", () => {
    const heard = vi.fn();
    const unsubscribe = onServerClockSet(heard);
    vi.spyOn(performance, "now").mockReturnValue(100);
    // Two hours ahead, as a Lead's laptop with the wrong zone set by hand is.
    vi.spyOn(Date, "now").mockReturnValue(1_700_007_200_000);
    setServerClock(1_700_000_000_000);
    expect(heard).toHaveBeenCalledTimes(1);
    expect(serverNowMs()).toBe(1_700_000_000_000);
    vi.spyOn(performance, "now").mockReturnValue(30_100);
    expect(serverNowMs()).toBe(1_700_000_030_000);
    unsubscribe();
    setServerClock(1_700_000_060_000);
    expect(heard).toHaveBeenCalledTimes(1);
  });

  it("ignores a reading that is not a time", () => {
    vi.spyOn(performance, "now").mockReturnValue(0);
    setServerClock(1_700_000_000_000);
    for (const junk of [Number.NaN, Number.POSITIVE_INFINITY, "1700000000000", null, undefined]) {
      setServerClock(junk);
    }
    expect(serverNowMs()).toBe(1_700_000_000_000);
  });
});
