import { describe, expect, it } from "vitest";
import type { RequestView } from "@/lib/requests/views";
import { withPendingRequest } from "./pending-patch";

function request(id: string, changes: Partial<RequestView> = {}): RequestView {
  return {
    id,
    type: "plan_approval",
    status: "pending",
    sender: "alice",
    target: "lead",
    agent: "alice",
    payload: { plan: "1. read" },
    feedback: null,
    response: null,
    respondedBy: null,
    decidedBy: null,
    respondedAt: null,
    createdAt: "2026-11-30T10:00:00.000Z",
    expiresAt: "2026-11-30T10:10:00.000Z",
    incarnation: 1,
    workVersion: 1,
    taskId: null,
    timeoutPolicy: "reject",
    responseType: "plan_approval_response",
    ...changes,
  } as RequestView;
}

describe("withPendingRequest", () => {
  it("adds a new pending request for the Lead once, however often it arrives", () => {
    const first = withPendingRequest([request("a")], request("b"));
    expect(first?.map((item) => item.id)).toEqual(["a", "b"]);
    expect(withPendingRequest(first, request("b"))?.map((item) => item.id)).toEqual(["a", "b"]);
  });

  it("leaves out a request decided before its row arrived, and one for an agent", () => {
    expect(withPendingRequest([request("a")], request("a", { status: "approved" }))).toEqual([]);
    expect(withPendingRequest([], request("s", { target: "alice", sender: "lead" }))).toEqual([]);
  });

  it("does not invent a list that was never loaded", () => {
    expect(withPendingRequest(undefined, request("a"))).toBeUndefined();
  });
});
