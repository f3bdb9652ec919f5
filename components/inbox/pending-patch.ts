import type { RequestView } from "@/lib/requests/views";
import { decidedBySchema } from "@/lib/shared/api/request";
import type { ConsoleEvent } from "@/lib/shared/events/catalog";
import type { RequestRowPayload } from "@/lib/shared/realtime/contract";

/**
 * The Lead's pending list with one request as it is now: added or replaced while it is pending
 * for the Lead, removed once it is not. A list not loaded yet stays unloaded: its first fetch
 * brings the request anyway.
 */
export function withPendingRequest(
  list: readonly RequestView[] | undefined,
  request: RequestView,
): RequestView[] | undefined {
  if (!list) return undefined;
  const others = list.filter((item) => item.id !== request.id);
  const isPendingForLead = request.status === "pending" && request.target === "lead";
  return isPendingForLead ? [...others, request] : others;
}

/**
 * What one event does to the pending list. `list`: the list after it (the same array when nothing
 * changed); `ended`: the row as the event leaves it, for a request that left the list, so it stays
 * on screen showing its outcome; `fetchRow`: the id of a request whose row the event cannot carry
 * (a new request's payload, a two-person approval's approver details), fetched on its own.
 */
export type PendingPatch = {
  list: RequestView[] | undefined;
  ended: RequestView | null;
  fetchRow: string | null;
};

function endRow(
  list: RequestView[],
  requestId: string,
  at: string,
  changes: Partial<RequestView>,
): PendingPatch {
  const row = list.find((item) => item.id === requestId);
  if (!row) return { list, ended: null, fetchRow: null };
  return {
    list: list.filter((item) => item.id !== requestId),
    ended: { ...row, respondedAt: at, ...changes },
    fetchRow: null,
  };
}

/** The event's `decidedBy` as a request view holds it; an unreadable one shows as unknown. */
function readDecidedBy(value: unknown): RequestView["decidedBy"] {
  const parsed = decidedBySchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * Patches the pending list from one event, never refetching it: events carry what a row's status
 * needs (docs/PROTOCOL.md, "What an event carries"), not its payload. Requests that are not on the
 * list (another target, already gone, a list not loaded yet) leave it as it is.
 */
export function patchPendingList(
  list: RequestView[] | undefined,
  event: ConsoleEvent,
): PendingPatch {
  const unchanged: PendingPatch = { list, ended: null, fetchRow: null };
  switch (event.kind) {
    case "request.created":
      return event.data.target === "lead"
        ? { ...unchanged, fetchRow: event.data.requestId }
        : unchanged;
    case "request.approval_recorded":
      return list?.some((item) => item.id === event.data.requestId)
        ? { ...unchanged, fetchRow: event.data.requestId }
        : unchanged;
    case "request.deadline_extended": {
      const { requestId, expiresAt } = event.data;
      if (!list?.some((item) => item.id === requestId)) return unchanged;
      return {
        ...unchanged,
        list: list.map((item) => (item.id === requestId ? { ...item, expiresAt } : item)),
      };
    }
    case "request.decided":
      return list
        ? endRow(list, event.data.requestId, event.at, {
            status: event.data.status,
            respondedBy: event.data.respondedBy,
            decidedBy: readDecidedBy(event.data.decidedBy),
          })
        : unchanged;
    case "request.expired":
      return list
        ? endRow(list, event.data.requestId, event.at, {
            status: "expired",
            respondedBy: "system",
            decidedBy: readDecidedBy(event.data.decidedBy),
          })
        : unchanged;
    case "request.superseded":
      return list
        ? endRow(list, event.data.requestId, event.at, { status: "superseded" })
        : unchanged;
    case "request.cancelled":
      return list
        ? endRow(list, event.data.requestId, event.at, {
            status: "cancelled",
            respondedBy: "system",
            feedback: event.data.reason,
          })
        : unchanged;
    default:
      return unchanged;
  }
}

/**
 * What a row the socket sent (decision 035) does to the list: added (or dropped, if no longer
 * pending for the Lead) when it is current; `fetchRow` when it is missing, or `isOvertaken` (an
 * event about the request arrived after it was announced, so it may predate that event).
 */
export function patchFromSocketRow(
  list: RequestView[] | undefined,
  { requestId, row }: RequestRowPayload,
  isOvertaken: boolean,
): Pick<PendingPatch, "list" | "fetchRow"> {
  if (!row || row.id !== requestId || isOvertaken) return { list, fetchRow: requestId };
  return { list: withPendingRequest(list, row), fetchRow: null };
}

/**
 * Single rows being read, and whether an event about one arrived meanwhile: the read may then
 * predate it (a request decided while its new row was in flight would be added as pending), so
 * its answer is thrown away and the row read again.
 */
export class RowReads {
  private readonly reads = new Map<string, boolean>();

  start(requestId: string): void {
    this.reads.set(requestId, false);
  }

  noteEvent(requestId: string): void {
    if (this.reads.has(requestId)) this.reads.set(requestId, true);
  }

  /** Ends a read; true when its answer may be older than an event and must be read again. */
  finish(requestId: string): boolean {
    const isOvertaken = this.reads.get(requestId) ?? false;
    this.reads.delete(requestId);
    return isOvertaken;
  }
}

/**
 * Rows that left the pending list and stay on screen with their outcome, and the ids the Lead
 * cleared. A cleared row is not brought back: the Lead's own answer, or a decision's details
 * (feedback, an answer), may arrive after the clear when the event showed the outcome first.
 */
export type ResolvedRows = {
  rows: ReadonlyMap<string, RequestView>;
  cleared: ReadonlySet<string>;
};

export const NO_RESOLVED_ROWS: ResolvedRows = { rows: new Map(), cleared: new Set() };

export function rememberResolved(state: ResolvedRows, request: RequestView): ResolvedRows {
  if (state.cleared.has(request.id)) return state;
  return { ...state, rows: new Map(state.rows).set(request.id, request) };
}

export function clearResolved(state: ResolvedRows): ResolvedRows {
  return { rows: new Map(), cleared: new Set([...state.cleared, ...state.rows.keys()]) };
}
