import { describe, expect, it } from "vitest";
import { requestAge } from "./request-age";

const asked = "2026-12-05T10:00:00.000Z";
const now = Date.parse("2026-12-05T10:30:00.000Z");

describe("requestAge", () => {
  it("ticks while pending, and stops at the answer", () => {
    expect(requestAge({ status: "pending", createdAt: asked, respondedAt: null }, now)).toBe(
      "waiting 30m",
    );
    const answered = { status: "approved", createdAt: asked, respondedAt: "2026-12-05T10:06:00Z" };
    expect(requestAge(answered, now)).toBe("waited 6m");
    expect(requestAge(answered, now + 3_600_000)).toBe("waited 6m");
    expect(requestAge({ status: "cancelled", createdAt: asked, respondedAt: null }, now)).toBe(
      "asked 30m ago",
    );
  });
});
