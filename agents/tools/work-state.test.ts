import { describe, expect, it } from "vitest";
import { WorkState } from "./work-state";

describe("WorkState", () => {
  it("describes a batch until its last file is written", () => {
    const state = new WorkState();
    expect(state.describeIncompleteBatch()).toBeNull();
    state.recordBatchWrite({ id: "migrate", index: 1, total: 3 });
    state.recordBatchWrite({ id: "migrate", index: 3, total: 3 });
    expect(state.describeIncompleteBatch()).toBe(
      "mid-write: batch 'migrate' has 2 of 3 files written",
    );
    state.recordBatchWrite({ id: "migrate", index: 2, total: 3 });
    expect(state.describeIncompleteBatch()).toBeNull();
  });

  it("counts a rewritten file once", () => {
    const state = new WorkState();
    state.recordBatchWrite({ id: "b", index: 1, total: 2 });
    state.recordBatchWrite({ id: "b", index: 1, total: 2 });
    expect(state.describeIncompleteBatch()).toBe("mid-write: batch 'b' has 1 of 2 files written");
  });

  it("describes every incomplete batch", () => {
    const state = new WorkState();
    state.recordBatchWrite({ id: "a", index: 1, total: 2 });
    state.recordBatchWrite({ id: "b", index: 2, total: 4 });
    expect(state.describeIncompleteBatch()).toBe(
      "mid-write: batch 'a' has 1 of 2 files written; batch 'b' has 1 of 4 files written",
    );
  });

  it("lets a finished batch's id start a new batch", () => {
    const state = new WorkState();
    state.recordBatchWrite({ id: "a", index: 1, total: 1 });
    state.recordBatchWrite({ id: "a", index: 1, total: 2 });
    expect(state.describeIncompleteBatch()).toBe("mid-write: batch 'a' has 1 of 2 files written");
  });

  it("refuses a position that contradicts the batch", () => {
    const state = new WorkState();
    state.recordBatchWrite({ id: "a", index: 1, total: 2 });
    expect(() => state.recordBatchWrite({ id: "a", index: 2, total: 3 })).toThrow(
      "batch 'a' was started with 2 files, not 3",
    );
    expect(() => state.assertBatchFits({ id: "c", index: 4, total: 3 })).toThrow("beyond total");
    expect(state.describeIncompleteBatch()).toBe("mid-write: batch 'a' has 1 of 2 files written");
  });

  it("survives a JSON round trip", () => {
    const state = new WorkState();
    state.recordBatchWrite({ id: "migrate", index: 3, total: 3 });
    state.recordBatchWrite({ id: "migrate", index: 1, total: 3 });
    const json = JSON.parse(JSON.stringify(state)) as unknown;
    expect(json).toEqual({ batches: [{ id: "migrate", total: 3, written: [1, 3] }] });
    const restored = WorkState.fromJSON(json);
    expect(restored.describeIncompleteBatch()).toBe(state.describeIncompleteBatch());
    restored.recordBatchWrite({ id: "migrate", index: 2, total: 3 });
    expect(restored.describeIncompleteBatch()).toBeNull();
    expect(restored.toJSON()).toEqual({ batches: [] });
  });

  it.each([
    null,
    { batches: "none" },
    { batches: [{ id: "a", total: 2, written: [3] }] },
    { batches: [], extra: true },
  ])("refuses to restore malformed state %j", (value) => {
    expect(() => WorkState.fromJSON(value)).toThrow();
  });
});
