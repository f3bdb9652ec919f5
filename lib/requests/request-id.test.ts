import { describe, expect, it } from "vitest";
import { newRequestId } from "./request-id";

describe("newRequestId", () => {
  it("gives 128 random bits per id, never the same bits twice across refills of its pool", () => {
    // Several refills of the pool: a slice handed out twice, or a pool reused unfilled, repeats.
    const ids = Array.from({ length: 1_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
