import { describe, expect, it } from "vitest";
import type { ConsoleEvent } from "../events/catalog";
import {
  applyBoardEvent,
  BOARD_BUCKETS,
  bucketOf,
  countBuckets,
  formatBoardQuery,
  parseBoardQuery,
  selectBoardRows,
  DEFAULT_BOARD_QUERY,
  type BoardMember,
  type BoardRequest,
} from "./board";
import { agentStatusSchema } from "./schema";

function member(name: string, changes: Partial<BoardMember> = {}): BoardMember {
  return {
    name,
    role: "builder",
    prompt: null,
    status: "working",
    gate: "not_required",
    workVersion: 0,
    taskId: null,
    incarnation: 1,
    lastHeartbeatAt: "2026-11-30T10:00:00.000Z",
    toolHost: null,
    connector: null,
    requirePlan: false,
    isForcedStop: false,
    worker: null,
    createdAt: "2026-11-30T09:00:00.000Z",
    taskTitle: null,
    blockedToolCalls: 0,
    pendingRequests: [],
    ...changes,
  };
}

function request(id: string, createdAt: string, target = "lead"): BoardRequest {
  return {
    id,
    type: "plan_approval",
    sender: target === "lead" ? "agent" : "lead",
    target,
    createdAt,
    expiresAt: "2026-11-30T12:00:00.000Z",
    timeoutPolicy: "auto-rejects",
  };
}

function event<K extends ConsoleEvent["kind"]>(
  kind: K,
  data: Extract<ConsoleEvent, { kind: K }>["data"],
): ConsoleEvent {
  return { id: 1, kind, subject: "x", at: "2026-11-30T11:00:00.000Z", data } as ConsoleEvent;
}

describe("header buckets", () => {
  it("every status, with and without a request pending on the Lead, lands in exactly one bucket", () => {
    const members = agentStatusSchema.options.flatMap((status) => [
      member(`${status}-free`, { status }),
      member(`${status}-asking`, { status, pendingRequests: [request("r", "2026-11-30T10:00Z")] }),
      member(`${status}-asked`, {
        status,
        pendingRequests: [request("q", "2026-11-30T10:00Z", "x")],
      }),
    ]);
    const counts = countBuckets(members);
    expect(BOARD_BUCKETS.reduce((sum, bucket) => sum + counts[bucket], 0)).toBe(members.length);
    expect(bucketOf(member("a", { status: "idle", pendingRequests: [request("r", "t")] }))).toBe(
      "waiting_on_you",
    );
    expect(bucketOf(member("a", { status: "waiting_approval" }))).toBe("working");
    expect(
      bucketOf(member("a", { status: "waiting_answer", pendingRequests: [request("r", "t")] })),
    ).toBe("waiting_on_you");
    expect(bucketOf(member("a", { status: "offline", pendingRequests: [request("r", "t")] }))).toBe(
      "orphaned",
    );
    expect(bucketOf(member("a", { status: "offline" }))).toBe("offline");
    expect(bucketOf(member("a", { status: "crashed", pendingRequests: [request("r", "t")] }))).toBe(
      "ended",
    );
  });

  it("counts as active only agents heard from: a registered agent that never beat is not", () => {
    const counts = countBuckets([
      member("never", { status: "starting", lastHeartbeatAt: null }),
      member("beating"),
      member("gone", { status: "offline" }),
      member("ended", { status: "shutdown" }),
    ]);
    expect(counts.active).toBe(1);
    expect(counts.starting).toBe(1);
  });
});

describe("sort and filter", () => {
  const team = [
    member("s10"),
    member("s2"),
    member("s1", { pendingRequests: [request("a", "2026-11-30T10:05:00Z")] }),
    member("s100", { pendingRequests: [request("b", "2026-11-30T10:01:00Z")] }),
    member("s3", { status: "offline", pendingRequests: [request("c", "2026-11-30T09:00:00Z")] }),
    member("s4", { role: "reviewer", gate: "pending" }),
  ];
  const names = (query: Partial<typeof DEFAULT_BOARD_QUERY>) =>
    selectBoardRows(team, { ...DEFAULT_BOARD_QUERY, ...query }).map((row) => row.name);

  it("puts the agents waiting on you first, longest waiting first, then orphans, then by natural name", () => {
    expect(names({})).toEqual(["s100", "s1", "s3", "s2", "s4", "s10"]);
  });

  it("orders names naturally and sorts by blocked time", () => {
    expect(names({ sort: "name" })).toEqual(["s1", "s2", "s3", "s4", "s10", "s100"]);
    expect(names({ sort: "blocked" })).toEqual(["s3", "s100", "s1", "s2", "s4", "s10"]);
  });

  it("filters by bucket, gate, role and search", () => {
    expect(names({ bucket: "orphaned" })).toEqual(["s3"]);
    expect(names({ gate: "pending" })).toEqual(["s4"]);
    expect(names({ role: "reviewer" })).toEqual(["s4"]);
    expect(names({ search: "S10", sort: "name" })).toEqual(["s10", "s100"]);
  });

  it("round-trips through the URL and ignores what it does not know", () => {
    const query = {
      search: "s1",
      bucket: "orphaned",
      gate: "rejected",
      role: "qa",
      sort: "blocked",
      view: "table",
    } as const;
    expect(parseBoardQuery(new URLSearchParams(formatBoardQuery(query)))).toEqual(query);
    expect(formatBoardQuery(DEFAULT_BOARD_QUERY)).toBe("");
    expect(parseBoardQuery(new URLSearchParams("status=ghost&sort=DROP&view=x&gate=<b>"))).toEqual(
      DEFAULT_BOARD_QUERY,
    );
  });

  it("cuts a long search and role without leaving half a character to put in a URL", () => {
    const long = "a".repeat(99) + "\u{1F600}";
    const query = parseBoardQuery(new URLSearchParams({ q: long, role: long }));
    expect(query).toMatchObject({ search: "a".repeat(99), role: "a".repeat(99) });
    expect(() => formatBoardQuery(query)).not.toThrow();
  });
});

describe("live patches", () => {
  const team = [member("s1", { gate: "required" }), member("s2")];

  it("patches one row from agent.updated and leaves the others as they were", () => {
    const { members, refetch } = applyBoardEvent(
      team,
      event("agent.updated", {
        agent: "s1",
        incarnation: 1,
        status: "idle",
        gate: "approved",
        workVersion: 0,
        taskId: null,
        toolHost: "sandboxed",
      }),
    );
    expect(refetch).toBeNull();
    expect(members[0]).toMatchObject({ status: "idle", gate: "approved", toolHost: "sandboxed" });
    expect(members[1]).toBe(team[1]);
  });

  it("shows a stopped agent without the task its incarnation gave back", () => {
    const working = [member("s1", { taskId: "t1", taskTitle: "deploy" })];
    const { members } = applyBoardEvent(
      working,
      event("agent.stopped", {
        agent: "s1",
        incarnation: 1,
        status: "shutdown",
        isForced: true,
        reason: "forced",
      }),
    );
    expect(members[0]).toMatchObject({ status: "shutdown", taskId: null, taskTitle: null });
  });

  it("adds a created request with its countdown and removes it when decided or cancelled", () => {
    const created = applyBoardEvent(
      team,
      event("request.created", {
        requestId: "r1",
        type: "plan_approval",
        agent: "s2",
        sender: "s2",
        target: "lead",
        expiresAt: "2026-11-30T11:10:00.000Z",
        timeoutPolicy: "auto-rejects",
      }),
    ).members;
    expect(created[1]?.pendingRequests).toEqual([
      expect.objectContaining({ id: "r1", createdAt: "2026-11-30T11:00:00.000Z" }),
    ]);
    expect(bucketOf(created[1] as BoardMember)).toBe("waiting_on_you");
    const decided = applyBoardEvent(
      created,
      event("request.decided", {
        requestId: "r1",
        type: "plan_approval",
        agent: "s2",
        status: "approved",
        respondedBy: "lead",
        decidedBy: null,
      }),
    ).members;
    expect(decided[1]?.pendingRequests).toEqual([]);
    const cancelled = applyBoardEvent(
      created,
      event("request.cancelled", { requestId: "r1", type: "plan_approval", reason: "respawn" }),
    ).members;
    expect(cancelled[1]?.pendingRequests).toEqual([]);
  });

  it("moves a request's countdown when a Lead extends its deadline", () => {
    const waiting = [
      member("s1", { pendingRequests: [request("r1", "2026-11-30T11:00:00.000Z")] }),
    ];
    const extended = applyBoardEvent(
      waiting,
      event("request.deadline_extended", {
        requestId: "r1",
        type: "plan_approval",
        agent: "s1",
        expiresAt: "2026-11-30T13:00:00.000Z",
        extendedBy: "lead@example.com",
      }),
    ).members;
    expect(extended[0]?.pendingRequests[0]?.expiresAt).toBe("2026-11-30T13:00:00.000Z");
  });

  it("asks for the row when the event cannot patch it, and changes nothing for unrelated events", () => {
    expect(
      applyBoardEvent(team, event("agent.registered", { agent: "s3", incarnation: 1, role: "x" }))
        .refetch,
    ).toBe("s3");
    expect(
      applyBoardEvent(
        team,
        event("agent.updated", {
          agent: "s1",
          incarnation: 2,
          status: "starting",
          gate: "required",
          workVersion: 0,
          taskId: null,
          toolHost: null,
        }),
      ).refetch,
    ).toBe("s1");
    const untouched = applyBoardEvent(
      team,
      event("message.sent", { messageId: 1, from: "lead", to: "s1", type: "message" }),
    );
    expect(untouched.members).toBe(team);
    const blocked = applyBoardEvent(
      team,
      event("tool.blocked", { agent: "s2", tool: "bash", gate: "required", riskClass: "x" }),
    );
    expect(blocked.members[1]?.blockedToolCalls).toBe(1);
  });
});
