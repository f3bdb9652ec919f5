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

  it("keeps the newest thousand: rows whose event never came are pushed out", () => {
    for (let index = 0; index < 1_001; index++) rememberNewRequestRow(row(`req_n${index}`));
    expect(takeNewRequestRow("req_n0")).toBeUndefined();
    expect(takeNewRequestRow("req_n1")).toEqual(row("req_n1"));
    expect(takeNewRequestRow("req_n1000")).toEqual(row("req_n1000"));
  });
});
