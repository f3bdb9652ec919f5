import { describe, expect, it } from "vitest";
import { rememberNewRequestRow, takeNewRequestRow } from "./new-rows";
import type { RequestView } from "./views";

function row(id: string, target = "lead"): RequestView {
  return { id, target } as RequestView;
}

describe("new request rows", () => {
  it("gives a row once, and keeps none for a request to an agent", () => {
    rememberNewRequestRow(row("req_once"));
    rememberNewRequestRow(row("req_to_agent", "agent-x"));
    expect(takeNewRequestRow("req_once")).toEqual(row("req_once"));
    expect(takeNewRequestRow("req_once")).toBeUndefined();
    expect(takeNewRequestRow("req_to_agent")).toBeUndefined();
  });

  it("keeps the newest 256: a flood of rows nobody takes is pushed out", () => {
    for (let index = 0; index < 1_000; index++) rememberNewRequestRow(row(`req_n${index}`));
    expect(takeNewRequestRow("req_n743")).toBeUndefined();
    expect(takeNewRequestRow("req_n744")).toEqual(row("req_n744"));
    expect(takeNewRequestRow("req_n999")).toEqual(row("req_n999"));
  });

  it("keeps a row seconds, not until newer ones push it out", () => {
    const at = Date.now() + 60_000;
    rememberNewRequestRow(row("req_stale"), at);
    rememberNewRequestRow(row("req_kept"), at + 5_000);
    // A row whose event never came is gone once 10 s have passed, taken or not.
    expect(takeNewRequestRow("req_kept", at + 9_000)).toEqual(row("req_kept"));
    expect(takeNewRequestRow("req_stale", at + 10_000)).toBeUndefined();
    rememberNewRequestRow(row("req_old"), at);
    rememberNewRequestRow(row("req_new"), at + 10_001);
    // Dropped from memory by the next row, not only refused when asked for.
    const held = (globalThis as { handshakeNewRequestRows?: Map<string, unknown> })
      .handshakeNewRequestRows;
    expect(held?.has("req_old")).toBe(false);
    expect(takeNewRequestRow("req_old", at + 10_001)).toBeUndefined();
    expect(takeNewRequestRow("req_new", at + 10_001)).toEqual(row("req_new"));
  });
});
