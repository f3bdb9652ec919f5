import { describe, expect, it } from "vitest";
import { pruneInputSchema } from "./prune";

function cutoff(before: string) {
  const parsed = pruneInputSchema.safeParse({ before });
  return parsed.success ? parsed.data.before.toISOString() : parsed.error.issues[0]?.message;
}

describe("the prune job's cutoff", () => {
  it("reads a day as its start in UTC, and a time by the offset it states", () => {
    expect(cutoff("2026-01-01")).toBe("2026-01-01T00:00:00.000Z");
    expect(cutoff("2026-01-01T12:00:00+02:00")).toBe("2026-01-01T10:00:00.000Z");
    expect(cutoff("2026-01-01T12:00:00Z")).toBe("2026-01-01T12:00:00.000Z");
  });

  it("refuses a time without its offset, which each machine's zone would read another way", () => {
    expect(cutoff("2026-01-01T12:00:00")).toBe("Invalid ISO datetime");
    expect(cutoff("2026-01-01 12:00")).toBe("Invalid ISO datetime");
    expect(cutoff("2026-02-30")).toBe("Invalid ISO datetime");
  });

  it("refuses times PostgreSQL cannot store, and the future, with a reason", () => {
    expect(cutoff("0000-06-01")).toBe("a time from year 1 to year 9999 (UTC)");
    expect(cutoff("-000001-01-01T00:00:00Z")).toBe("Invalid ISO datetime");
    expect(cutoff("2999-01-01")).toBe("the cutoff cannot be in the future");
    expect(cutoff("")).toBe("Invalid ISO datetime");
  });
});
