import { describe, expect, it, vi } from "vitest";
import { expectNewRequestRow, rememberNewRequestRow, takeNewRequestRow } from "./new-rows";
import type { RequestView } from "./views";

function row(id: string, target = "lead"): RequestView {
  return { id, target } as RequestView;
}

describe("new request rows", async () => {
  it("gives a row once, and keeps none for a request to an agent", async () => {
    rememberNewRequestRow(row("req_once"));
    rememberNewRequestRow(row("req_to_agent", "agent-x"));
    expect(await takeNewRequestRow("req_once")).toEqual(row("req_once"));
    expect(await takeNewRequestRow("req_once")).toBeUndefined();
    expect(await takeNewRequestRow("req_to_agent")).toBeUndefined();
  });

  it("keeps the newest 256: a flood of rows nobody takes is pushed out", async () => {
    for (let index = 0; index < 1_000; index++) rememberNewRequestRow(row(`req_n${index}`));
    expect(await takeNewRequestRow("req_n743")).toBeUndefined();
    expect(await takeNewRequestRow("req_n744")).toEqual(row("req_n744"));
    expect(await takeNewRequestRow("req_n999")).toEqual(row("req_n999"));
  });

  it("keeps a row seconds, not until newer ones push it out", async () => {
    const at = Date.now() + 60_000;
    rememberNewRequestRow(row("req_stale"), at);
    rememberNewRequestRow(row("req_kept"), at + 5_000);
    // A row whose event never came is gone once 10 s have passed, taken or not.
    expect(await takeNewRequestRow("req_kept", at + 9_000)).toEqual(row("req_kept"));
    expect(await takeNewRequestRow("req_stale", at + 10_000)).toBeUndefined();
    rememberNewRequestRow(row("req_old"), at);
    rememberNewRequestRow(row("req_new"), at + 10_001);
    // Dropped from memory by the next row, not only refused when asked for.
    const held = (globalThis as { handshakeNewRequestRows?: Map<string, unknown> })
      .handshakeNewRequestRows;
    expect(held?.has("req_old")).toBe(false);
    expect(await takeNewRequestRow("req_old", at + 10_001)).toBeUndefined();
    expect(await takeNewRequestRow("req_new", at + 10_001)).toEqual(row("req_new"));
  });

  it("waits for a statement that has committed but not answered, once", async () => {
    let answer: (view: RequestView | undefined) => void = () => undefined;
    expectNewRequestRow("req_pending", new Promise((resolve) => (answer = resolve)));
    const taken = takeNewRequestRow("req_pending");
    answer(row("req_pending"));
    expect(await taken).toEqual(row("req_pending"));
    expect(await takeNewRequestRow("req_pending")).toBeUndefined();

    expectNewRequestRow("req_nothing_written", Promise.resolve(undefined));
    expect(await takeNewRequestRow("req_nothing_written")).toBeUndefined();
  });

  it("reads the row instead when the statement's answer is a second late", async () => {
    vi.useFakeTimers();
    try {
      expectNewRequestRow("req_late", new Promise(() => undefined));
      const taken = takeNewRequestRow("req_late");
      await vi.advanceTimersByTimeAsync(999);
      let isSettled = false;
      void taken.then(() => (isSettled = true));
      await vi.advanceTimersByTimeAsync(0);
      expect(isSettled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await taken).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});
