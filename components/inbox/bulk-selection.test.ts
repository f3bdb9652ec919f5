import { describe, expect, it } from "vitest";
import type { BulkDecision } from "@/lib/shared/api/bulk-decision";
import type { RequestView } from "@/lib/requests/views";
import { summarizeBulkDecision } from "./bulk-bar";
import { isBulkDecidable, toggleTicked } from "./use-bulk-selection";

const IDS = ["a", "b", "c", "d", "e"];

describe("ticking requests for a bulk decision", () => {
  it("x or a click toggles one", () => {
    const once = toggleTicked(new Set(), IDS, "b", null);
    expect([...once]).toEqual(["b"]);
    expect([...toggleTicked(once, IDS, "b", null)]).toEqual([]);
  });

  it("shift-click ticks the range from the last one touched, either direction", () => {
    expect([...toggleTicked(new Set(["b"]), IDS, "d", "b")].sort()).toEqual(["b", "c", "d"]);
    expect([...toggleTicked(new Set(["d"]), IDS, "a", "d")].sort()).toEqual(["a", "b", "c", "d"]);
  });

  it("shift-click on a ticked one unticks the range", () => {
    expect([...toggleTicked(new Set(IDS), IDS, "c", "e")].sort()).toEqual(["a", "b"]);
  });

  it("an anchor no longer on screen ticks just the one", () => {
    expect([...toggleTicked(new Set(), IDS, "c", "gone")]).toEqual(["c"]);
    expect(toggleTicked(new Set(["a"]), IDS, "gone", "a")).toEqual(new Set(["a"]));
  });

  it("takes pending requests but never a question, which needs its own answer", () => {
    const request = (type: string, status: string) => ({ type, status }) as RequestView;
    expect(isBulkDecidable(request("tool_approval", "pending"))).toBe(true);
    expect(isBulkDecidable(request("plan_approval", "pending"))).toBe(true);
    expect(isBulkDecidable(request("question", "pending"))).toBe(false);
    expect(isBulkDecidable(request("tool_approval", "approved"))).toBe(false);
  });
});

describe("the bulk decision's summary", () => {
  const items = [{ id: "r2", agent: "brock", type: "tool_approval" }] as RequestView[];
  const decided = {
    id: "r1",
    ok: true,
    request: { status: "approved" },
  } as BulkDecision["results"][number];

  it("counts what was decided", () => {
    expect(summarizeBulkDecision({ results: [decided, decided] }, true, items)).toBe("2 approved");
  });

  it("does not count a two-Lead card's first approval as approved", () => {
    // Red team: "2 approved" while one of the two still needed a second Lead.
    const firstOfTwo = {
      id: "r3",
      ok: true,
      request: { status: "pending" },
    } as BulkDecision["results"][number];
    expect(summarizeBulkDecision({ results: [decided, firstOfTwo] }, true, items)).toBe(
      "1 approved, 1 waiting for a second Lead's approval",
    );
  });

  it("names each failure by agent and type, with the server's reason", () => {
    const failed = {
      id: "r2",
      ok: false as const,
      error: { code: "ALREADY_DECIDED", message: "request r2 is already approved" },
    };
    const unknown = { ...failed, id: "r9", error: { code: "X", message: "no request r9" } };
    expect(summarizeBulkDecision({ results: [decided, failed, unknown] }, false, items)).toBe(
      "1 rejected, 2 failed: brock's risky tool call: request r2 is already approved; r9: no request r9",
    );
  });
});
