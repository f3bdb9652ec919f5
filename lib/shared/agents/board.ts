import type { ConsoleEvent } from "../events/catalog";
import type { RequestView } from "../../requests/views";
import { gateStateSchema, type GateState } from "./schema";
import { cutText } from "../text/cut";
import type { TeamMember } from "../../agents/views";

/**
 * The team board's model, free of React: which header bucket an agent counts in, how the board
 * sorts and filters (the URL holds both), and how one event patches one row (decision 019).
 */

/**
 * A pending request as a board row shows it. Rows patched from a `request.created` event carry no
 * payload (an event never does); a card that shows the summary fetches the request by its id.
 */
export type BoardRequest = Pick<
  RequestView,
  "id" | "type" | "sender" | "target" | "createdAt" | "expiresAt" | "timeoutPolicy"
> & { payload?: RequestView["payload"] };

export type BoardMember = Omit<TeamMember, "pendingRequests"> & {
  pendingRequests: BoardRequest[];
};

/**
 * Of the agents that are gone (ended, or offline for over an hour with nothing pending), how many
 * the board shows unless the Lead asks for all: those that went last (decision 091). Nothing
 * prunes an agent (its requests are the audit trail); a `connect` token starts a session a
 * second, and a session closed without ending goes offline for good. The board is refetched
 * whole every 30 s: it must not grow with every session ever.
 */
export const RECENT_GONE_ON_BOARD = 500;
export const GONE_AFTER_SILENT_MS = 60 * 60 * 1000;

/** Header order. Every agent is in exactly one. */
export const BOARD_BUCKETS = [
  "waiting_on_you",
  "working",
  "idle",
  "starting",
  "stopping",
  "orphaned",
  "offline",
  "ended",
] as const;
export type BoardBucket = (typeof BOARD_BUCKETS)[number];

export const BUCKET_LABELS: Record<BoardBucket, string> = {
  waiting_on_you: "Waiting on you",
  working: "Working",
  idle: "Idle",
  starting: "Starting",
  stopping: "Stopping",
  orphaned: "Orphaned",
  offline: "Offline",
  ended: "Ended",
};

export function isWaitingOnLead(request: Pick<BoardRequest, "target">): boolean {
  return request.target === "lead";
}

/**
 * The one bucket an agent counts in. "Waiting on you" is a live agent with a request pending on the
 * Lead, whatever status it last reported; an offline agent with one is orphaned (nothing runs to act
 * on the answer). `waiting_approval` or `waiting_answer` with nothing pending on the Lead is an agent
 * whose request was just answered and has not said what it does next: it counts as working.
 */
export function bucketOf(member: Pick<BoardMember, "status" | "pendingRequests">): BoardBucket {
  const isWaiting = member.pendingRequests.some(isWaitingOnLead);
  switch (member.status) {
    case "shutdown":
    case "crashed":
      return "ended";
    case "offline":
      return member.pendingRequests.length > 0 ? "orphaned" : "offline";
    case "stopping":
      return isWaiting ? "waiting_on_you" : "stopping";
    case "starting":
      return isWaiting ? "waiting_on_you" : "starting";
    case "idle":
      return isWaiting ? "waiting_on_you" : "idle";
    case "working":
    case "waiting_approval":
    case "waiting_answer":
      return isWaiting ? "waiting_on_you" : "working";
    default: {
      const unreachable: never = member.status;
      return unreachable;
    }
  }
}

/** Heard from: it has sent a heartbeat in this incarnation and is neither offline nor ended. */
export function isHeardFrom(member: Pick<BoardMember, "status" | "lastHeartbeatAt">): boolean {
  return (
    member.lastHeartbeatAt !== null &&
    member.status !== "offline" &&
    member.status !== "shutdown" &&
    member.status !== "crashed"
  );
}

export type BoardCounts = Record<BoardBucket, number> & { total: number; active: number };

export function countBuckets(members: readonly BoardMember[]): BoardCounts {
  const counts = Object.fromEntries(BOARD_BUCKETS.map((bucket) => [bucket, 0])) as Record<
    BoardBucket,
    number
  >;
  let active = 0;
  for (const member of members) {
    counts[bucketOf(member)] += 1;
    if (isHeardFrom(member)) active += 1;
  }
  return { ...counts, total: members.length, active };
}

/** When the agent started waiting on the Lead: its oldest request pending on the Lead. */
export function blockedSince(member: Pick<BoardMember, "pendingRequests">): string | null {
  let oldest: string | null = null;
  for (const request of member.pendingRequests) {
    if (isWaitingOnLead(request) && (oldest === null || request.createdAt < oldest)) {
      oldest = request.createdAt;
    }
  }
  return oldest;
}

// ---- sort and filter, as the URL spells them ----

export const BOARD_SORTS = [
  "waiting",
  "name",
  "status",
  "gate",
  "role",
  "blocked",
  "heartbeat",
] as const;
export type BoardSort = (typeof BOARD_SORTS)[number];
export const SORT_LABELS: Record<BoardSort, string> = {
  waiting: "Waiting on you first",
  name: "Name",
  status: "Status",
  gate: "Gate",
  role: "Role",
  blocked: "Blocked longest",
  heartbeat: "Heartbeat oldest",
};

export const BOARD_VIEWS = ["table", "cards"] as const;
export type BoardView = (typeof BOARD_VIEWS)[number];

/** Past this many agents the board opens as a table, unless the Lead chose the cards. */
export const TABLE_VIEW_THRESHOLD = 36;

export type BoardQuery = {
  search: string;
  bucket: BoardBucket | null;
  gate: GateState | null;
  role: string | null;
  sort: BoardSort;
  /** null: the Lead has not chosen in the URL. */
  view: BoardView | null;
};

export const DEFAULT_BOARD_QUERY: BoardQuery = {
  search: "",
  bucket: null,
  gate: null,
  role: null,
  sort: "waiting",
  view: null,
};

function oneOf<T extends string>(values: readonly T[], value: string | null): T | null {
  return value !== null && (values as readonly string[]).includes(value) ? (value as T) : null;
}

/** Reads the board's query from the URL; a value it does not know is ignored, never an error. */
export function parseBoardQuery(params: Pick<URLSearchParams, "get">): BoardQuery {
  return {
    search: cutText(params.get("q") ?? "", 100),
    bucket: oneOf(BOARD_BUCKETS, params.get("status")),
    gate: oneOf(gateStateSchema.options, params.get("gate")),
    role: cutText(params.get("role") ?? "", 100) || null,
    sort: oneOf(BOARD_SORTS, params.get("sort")) ?? "waiting",
    view: oneOf(BOARD_VIEWS, params.get("view")),
  };
}

/** The URL's query string for a board query; defaults are left out so a plain /team stays plain. */
export function formatBoardQuery(query: BoardQuery): string {
  const params = new URLSearchParams();
  if (query.search) params.set("q", query.search);
  if (query.bucket) params.set("status", query.bucket);
  if (query.gate) params.set("gate", query.gate);
  if (query.role) params.set("role", query.role);
  if (query.sort !== "waiting") params.set("sort", query.sort);
  if (query.view) params.set("view", query.view);
  return params.toString();
}

/** `s2` before `s10`. */
const naturalOrder = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
export const compareNatural = (a: string, b: string): number => naturalOrder.compare(a, b);

const GATE_ORDER: Record<GateState, number> = {
  pending: 0,
  rejected: 1,
  required: 2,
  approved: 3,
  not_required: 4,
};

/** Sort keys computed once per row, so sorting a thousand rows does not recompute them. */
type Keyed = { member: BoardMember; bucket: BoardBucket; blockedSince: string | null };

function compareKeyed(sort: BoardSort): (a: Keyed, b: Keyed) => number {
  const byName = (a: Keyed, b: Keyed) => compareNatural(a.member.name, b.member.name);
  // Longest first; agents not blocked after every blocked one.
  const byBlocked = (a: Keyed, b: Keyed) =>
    a.blockedSince === b.blockedSince
      ? 0
      : a.blockedSince === null
        ? 1
        : b.blockedSince === null
          ? -1
          : a.blockedSince < b.blockedSince
            ? -1
            : 1;
  const then =
    (...comparators: ((a: Keyed, b: Keyed) => number)[]) =>
    (a: Keyed, b: Keyed) => {
      for (const compare of comparators) {
        const order = compare(a, b);
        if (order !== 0) return order;
      }
      return 0;
    };
  const waitingRank = (keyed: Keyed) =>
    keyed.bucket === "waiting_on_you" ? 0 : keyed.bucket === "orphaned" ? 1 : 2;
  switch (sort) {
    case "waiting":
      return then((a, b) => waitingRank(a) - waitingRank(b), byBlocked, byName);
    case "name":
      return byName;
    case "status":
      return then(
        (a, b) => BOARD_BUCKETS.indexOf(a.bucket) - BOARD_BUCKETS.indexOf(b.bucket),
        byName,
      );
    case "gate":
      return then((a, b) => GATE_ORDER[a.member.gate] - GATE_ORDER[b.member.gate], byName);
    case "role":
      return then((a, b) => compareNatural(a.member.role, b.member.role), byName);
    case "blocked":
      return then(byBlocked, byName);
    case "heartbeat":
      // Oldest first, never heard from before all: the agents most likely to be gone.
      return then((a, b) => {
        const left = a.member.lastHeartbeatAt ?? "";
        const right = b.member.lastHeartbeatAt ?? "";
        return left === right ? 0 : left < right ? -1 : 1;
      }, byName);
    default:
      return byName;
  }
}

function matchesSearch(member: BoardMember, needle: string): boolean {
  return (
    member.name.includes(needle) ||
    member.role.toLowerCase().includes(needle) ||
    (member.taskTitle?.toLowerCase().includes(needle) ?? false)
  );
}

/** The rows the board shows, in order. */
export function selectBoardRows(
  members: readonly BoardMember[],
  query: Omit<BoardQuery, "view">,
): BoardMember[] {
  const needle = query.search.trim().toLowerCase();
  const keyed: Keyed[] = [];
  for (const member of members) {
    const bucket = bucketOf(member);
    if (query.bucket && bucket !== query.bucket) continue;
    if (query.gate && member.gate !== query.gate) continue;
    if (query.role && member.role !== query.role) continue;
    if (needle && !matchesSearch(member, needle)) continue;
    keyed.push({ member, bucket, blockedSince: blockedSince(member) });
  }
  return keyed.sort(compareKeyed(query.sort)).map((row) => row.member);
}

// ---- live updates: one event patches one row ----

export type BoardPatch = {
  members: BoardMember[];
  /** An agent the event names that the board cannot patch from the event alone: fetch its row. */
  refetch: string | null;
};

function replaceMember(
  members: BoardMember[],
  name: string,
  change: (member: BoardMember) => BoardMember | null,
): BoardPatch {
  const index = members.findIndex((member) => member.name === name);
  const current = members[index];
  if (!current) return { members, refetch: name };
  const next = change(current);
  if (next === null) return { members, refetch: name };
  if (next === current) return { members, refetch: null };
  const copy = members.slice();
  copy[index] = next;
  return { members: copy, refetch: null };
}

function withoutRequest(member: BoardMember, requestId: string): BoardMember {
  return member.pendingRequests.some((request) => request.id === requestId)
    ? {
        ...member,
        pendingRequests: member.pendingRequests.filter((request) => request.id !== requestId),
      }
    : member;
}

/**
 * The board after one event. Returns the same array when nothing shown changed, so the cache
 * notifies nobody; names a row to fetch when the event does not carry enough to patch it (a new
 * agent, a respawn, a task whose title the board does not know).
 */
export function applyBoardEvent(members: BoardMember[], event: ConsoleEvent): BoardPatch {
  switch (event.kind) {
    case "agent.updated": {
      const { agent, incarnation, status, gate, workVersion, taskId, toolHost } = event.data;
      return replaceMember(members, agent, (member) => {
        if (member.incarnation !== incarnation) return null;
        if (member.taskId !== taskId && taskId !== null) return null;
        return {
          ...member,
          status,
          gate,
          workVersion,
          toolHost,
          taskId,
          taskTitle: taskId === null ? null : member.taskTitle,
        };
      });
    }
    case "agent.stopped": {
      const { agent, incarnation, status, isForced } = event.data;
      return replaceMember(members, agent, (member) =>
        member.incarnation === incarnation
          ? // An ended incarnation holds no task (decision 074).
            { ...member, status, isForcedStop: isForced, taskId: null, taskTitle: null }
          : member.incarnation < incarnation
            ? null
            : member,
      );
    }
    case "agent.registered":
    case "agent.respawned":
      return { members, refetch: event.data.agent };
    case "request.created": {
      const { requestId, type, agent, sender, target, expiresAt, timeoutPolicy } = event.data;
      return replaceMember(members, agent, (member) =>
        member.pendingRequests.some((request) => request.id === requestId)
          ? member
          : {
              ...member,
              pendingRequests: [
                ...member.pendingRequests,
                {
                  id: requestId,
                  type,
                  sender,
                  target,
                  createdAt: event.at,
                  expiresAt: expiresAt ?? event.at,
                  timeoutPolicy: timeoutPolicy ?? null,
                },
              ],
            },
      );
    }
    case "request.deadline_extended": {
      const { agent, requestId, expiresAt } = event.data;
      return replaceMember(members, agent, (member) => ({
        ...member,
        pendingRequests: member.pendingRequests.map((request) =>
          request.id === requestId ? { ...request, expiresAt } : request,
        ),
      }));
    }
    case "request.decided":
    case "request.expired":
    case "request.superseded": {
      const { agent, requestId } = event.data;
      return replaceMember(members, agent, (member) => withoutRequest(member, requestId));
    }
    case "request.cancelled": {
      const { requestId } = event.data;
      const owner = members.find((member) =>
        member.pendingRequests.some((request) => request.id === requestId),
      );
      return owner
        ? replaceMember(members, owner.name, (member) => withoutRequest(member, requestId))
        : { members, refetch: null };
    }
    case "tool.blocked":
      return replaceMember(members, event.data.agent, (member) => ({
        ...member,
        blockedToolCalls: member.blockedToolCalls + 1,
      }));
    case "request.approval_recorded":
    case "tool.allowed":
    case "message.sent":
    case "task.created":
    case "task.updated":
    case "rule.created":
    case "rule.updated":
    case "rule.deleted":
    case "user.updated":
    case "session.ended":
    case "audit.pruned":
      return { members, refetch: null };
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
