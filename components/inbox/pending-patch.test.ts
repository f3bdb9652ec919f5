import { describe, expect, it } from "vitest";
import type { RequestView } from "@/lib/requests/views";
import type { ConsoleEvent } from "@/lib/shared/events/catalog";
import {
  clearResolved,
  NO_RESOLVED_ROWS,
  patchFromSocketRow,
  rememberResolved,
  patchPendingList,
  RowReads,
  withPendingRequest,
} from "./pending-patch";

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

function event<K extends ConsoleEvent["kind"]>(
  kind: K,
  data: Extract<ConsoleEvent, { kind: K }>["data"],
): ConsoleEvent {
  return {
    id: 1,
    kind,
    subject: "request:x",
    at: "2026-11-30T10:05:00.000Z",
    data,
  } as ConsoleEvent;
}

describe("patchPendingList", () => {
  const list = [request("a"), request("b")];

  it("takes a decided request off the list and keeps its row with the decision, fetching nothing", () => {
    const patch = patchPendingList(
      list,
      event("request.decided", {
        requestId: "a",
        type: "plan_approval",
        agent: "alice",
        status: "approved",
        respondedBy: "ada@example.com",
        decidedBy: { kind: "human", userId: "u1", sessionId: "s1" },
      }),
    );
    expect(patch.list?.map((item) => item.id)).toEqual(["b"]);
    expect(patch.ended).toMatchObject({
      id: "a",
      status: "approved",
      respondedBy: "ada@example.com",
      decidedBy: { kind: "human", userId: "u1", sessionId: "s1" },
      respondedAt: "2026-11-30T10:05:00.000Z",
      payload: { plan: "1. read" },
    });
    expect(patch.fetchRow).toBeNull();
  });

  it("ends rows on expiry, supersession and cancellation with the status each gives", () => {
    const expired = patchPendingList(
      list,
      event("request.expired", {
        requestId: "a",
        type: "plan_approval",
        agent: "alice",
        policy: "reject",
        decidedBy: { kind: "timeout", policy: "reject" },
      }),
    );
    expect(expired.ended).toMatchObject({ status: "expired", decidedBy: { kind: "timeout" } });
    const superseded = patchPendingList(
      list,
      event("request.superseded", { requestId: "b", agent: "alice", type: "plan_approval" }),
    );
    expect(superseded.list?.map((item) => item.id)).toEqual(["a"]);
    expect(superseded.ended?.status).toBe("superseded");
    const cancelled = patchPendingList(
      list,
      event("request.cancelled", { requestId: "a", type: "plan_approval", reason: "stopped" }),
    );
    expect(cancelled.ended).toMatchObject({ status: "cancelled", feedback: "stopped" });
  });

  it("reads an unreadable decidedBy as unknown rather than trusting it", () => {
    const patch = patchPendingList(
      list,
      event("request.decided", {
        requestId: "a",
        type: "plan_approval",
        agent: "alice",
        status: "approved",
        respondedBy: "x",
        decidedBy: { kind: "root" },
      }),
    );
    expect(patch.ended?.decidedBy).toBeNull();
  });

  it("moves a row's deadline in place", () => {
    const patch = patchPendingList(
      list,
      event("request.deadline_extended", {
        requestId: "b",
        type: "plan_approval",
        agent: "alice",
        expiresAt: "2026-11-30T11:00:00.000Z",
        extendedBy: "ada@example.com",
      }),
    );
    expect(patch.list?.map((item) => item.expiresAt)).toEqual([
      "2026-11-30T10:10:00.000Z",
      "2026-11-30T11:00:00.000Z",
    ]);
    expect(patch.ended).toBeNull();
  });

  it("fetches only the one row an event cannot carry: a new request for the Lead, a first approval", () => {
    const created = (target: string) =>
      event("request.created", {
        requestId: "c",
        type: "plan_approval",
        agent: "alice",
        sender: target === "lead" ? "alice" : "lead",
        target,
        expiresAt: null,
      });
    expect(patchPendingList(list, created("lead"))).toMatchObject({ list, fetchRow: "c" });
    expect(patchPendingList(list, created("alice")).fetchRow).toBeNull();
    const recorded = (requestId: string) =>
      event("request.approval_recorded", {
        requestId,
        type: "plan_approval",
        agent: "alice",
        approvedBy: "ada@example.com",
        approvals: 1,
        requiredApprovals: 2,
      });
    expect(patchPendingList(list, recorded("a")).fetchRow).toBe("a");
    expect(patchPendingList(list, recorded("zzz")).fetchRow).toBeNull();
  });

  it("leaves the list as it is for requests not on it, other events and a list not loaded", () => {
    const decided = event("request.decided", {
      requestId: "zzz",
      type: "plan_approval",
      agent: "alice",
      status: "approved",
      respondedBy: null,
      decidedBy: null,
    });
    expect(patchPendingList(list, decided)).toEqual({ list, ended: null, fetchRow: null });
    expect(patchPendingList(undefined, decided).list).toBeUndefined();
    const other = event("task.created", { taskId: "t", title: "x" });
    expect(patchPendingList(list, other).list).toBe(list);
  });
});

describe("RowReads", () => {
  it("says a read overtaken by an event about its row must be read again, and forgets it after", () => {
    const reads = new RowReads();
    reads.start("a");
    reads.start("b");
    reads.noteEvent("a");
    reads.noteEvent("zzz");
    expect(reads.finish("a")).toBe(true);
    expect(reads.finish("b")).toBe(false);
    reads.noteEvent("a");
    reads.start("a");
    expect(reads.finish("a")).toBe(false);
  });
});

describe("patchFromSocketRow", () => {
  const list = [request("a"), request("b")];

  it("adds the new request's row the socket sent, fetching nothing", () => {
    const patch = patchFromSocketRow(list, { requestId: "c", row: request("c") }, false);
    expect(patch.list?.map((item) => item.id)).toEqual(["a", "b", "c"]);
    expect(patch.fetchRow).toBeNull();
  });

  it("adds nothing for a row read after its decision committed", () => {
    const row = request("c", { status: "approved" });
    expect(patchFromSocketRow(list, { requestId: "c", row }, false)).toEqual({
      list,
      fetchRow: null,
    });
  });

  it("fetches the row when none came, when it is another request's, or when an event overtook it", () => {
    for (const [payload, isOvertaken] of [
      [{ requestId: "c", row: null }, false],
      [{ requestId: "c", row: request("other") }, false],
      [{ requestId: "c", row: request("c") }, true],
    ] as const) {
      expect(patchFromSocketRow(list, payload, isOvertaken)).toEqual({ list, fetchRow: "c" });
    }
  });
});

describe("resolved rows", () => {
  it("keeps a decided row until cleared, and a late answer for it does not bring it back", () => {
    const shown = rememberResolved(NO_RESOLVED_ROWS, request("a", { status: "approved" }));
    expect([...shown.rows.keys()]).toEqual(["a"]);
    const cleared = clearResolved(shown);
    expect(cleared.rows.size).toBe(0);
    const lateAnswer = rememberResolved(cleared, request("a", { status: "approved" }));
    expect(lateAnswer.rows.size).toBe(0);
    expect([...rememberResolved(lateAnswer, request("b")).rows.keys()]).toEqual(["b"]);
  });
});
