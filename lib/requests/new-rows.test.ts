import { describe, expect, it } from "vitest";
import { expectNewRequestRow, rememberNewRequestRow, takeNewRequestRow } from "./new-rows";
import type { RequestView } from "./views";

function row(id: string, target = "lead"): RequestView {
  return { id, target } as RequestView;
}

describe("new request rows", () => {
  it("gives a row once, and keeps none for a request to an agent", async () => {
    rememberNewRequestRow(row("req_once"));
    rememberNewRequestRow(row("req_to_agent", "agent-x"));
    expect(await takeNewRequestRow("req_once")).toEqual(row("req_once"));
    expect(await takeNewRequestRow("req_once")).toBeUndefined();
    expect(await takeNewRequestRow("req_to_agent")).toBeUndefined();
  });

  it("gives an expected row once its statement answers, and none that is not the Lead's", async () => {
    expectNewRequestRow("req_expected", Promise.resolve(row("req_expected")));
    expectNewRequestRow("req_expected_agent", Promise.resolve(row("req_expected_agent", "ada")));
    expect(await takeNewRequestRow("req_expected")).toEqual(row("req_expected"));
    expect(await takeNewRequestRow("req_expected_agent")).toBeUndefined();
  });
});
