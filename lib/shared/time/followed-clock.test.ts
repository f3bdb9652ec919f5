import { afterEach, describe, expect, it, vi } from "vitest";
import { followedNowMs } from "./followed-clock";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("followedNowMs", () => {
  it("is this machine's own clock before any reading", () => {
    vi.spyOn(Date, "now").mockReturnValue(1_700_000_000_000);
    expect(followedNowMs(null)).toBe(1_700_000_000_000);
  });

  it("carries a reading on by the monotonic clock, whatever the wall clock says", () => {
    const monotonic = vi.spyOn(performance, "now").mockReturnValue(5_000.4);
    const reading = { remoteMs: 1_700_000_000_000, monotonicMs: 5_000.4 };
    vi.spyOn(Date, "now").mockReturnValue(1_600_000_000_000);
    expect(followedNowMs(reading)).toBe(1_700_000_000_000);
    monotonic.mockReturnValue(6_250.9);
    expect(followedNowMs(reading)).toBe(1_700_000_001_251);
  });
});
