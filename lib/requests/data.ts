import { takeLongPollSlot, type LongPollSlot } from "../agents/limits";
import type { Actor } from "../auth/actor";
import type { Db } from "../db";
import { z } from "zod";
import { AppError } from "../errors";
import type { ClientGone } from "../http/client-gone";
import { decodeCursor, encodeCursor } from "../http/cursor";
import type { Prisma, Request } from "../generated/prisma/client";
import { requestEndWaitKey, type EventHub } from "../realtime/event-hub";
import { longPollDeadline, LongPollAnswer, type LongPollSource } from "../realtime/long-poll";
import { instantSchema } from "../shared/api/instant";
import { REQUEST_ID_PATTERN, type RequestStatus } from "../shared/requests/schema";
import type { GetRequestQuery, ListRequestsQuery } from "./schema";
import { findApprovals } from "./approvals";
import { toRequestView, type RequestView } from "./views";

export type RequestPage = { items: RequestView[]; nextCursor: string | null };

type Cursor = { createdAt: Date; expiresAt: Date | null; id: string };
type Order = ListRequestsQuery["order"];

/** Oldest-first pages also order by expiry, so their cursor carries it; newest-first ones don't. */
const requestCursorSchema = z.union([
  z.strictObject({
    order: z.literal("oldest"),
    createdAt: instantSchema(),
    expiresAt: instantSchema(),
    id: z.string().regex(REQUEST_ID_PATTERN),
  }),
  z.strictObject({
    order: z.literal("newest"),
    createdAt: instantSchema(),
    id: z.string().regex(REQUEST_ID_PATTERN),
  }),
]);

function encodeRequestCursor(order: Order, row: Request): string {
  return encodeCursor(
    order === "oldest"
      ? {
          order,
          createdAt: row.createdAt.toISOString(),
          expiresAt: row.expiresAt.toISOString(),
          id: row.id,
        }
      : { order, createdAt: row.createdAt.toISOString(), id: row.id },
  );
}

function decodeRequestCursor(order: Order, raw: string): Cursor {
  const cursor = decodeCursor(raw, requestCursorSchema);
  if (!cursor || cursor.order !== order) {
    throw new AppError("INVALID_INPUT", "cursor: not a cursor this API returned for this order");
  }
  return {
    createdAt: new Date(cursor.createdAt),
    expiresAt: "expiresAt" in cursor ? new Date(cursor.expiresAt) : null,
    id: cursor.id,
  };
}

/** The parsed query, or a caller's own filters with one status or several. */
export type RequestFilters = Omit<ListRequestsQuery, "status" | "order"> & {
  status?: RequestStatus | readonly RequestStatus[] | undefined;
  order?: Order | undefined;
};

function compareNewestFirst(a: Request, b: Request): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function compareOldestFirst(a: Request, b: Request): number {
  return (
    a.createdAt.getTime() - b.createdAt.getTime() ||
    a.expiresAt.getTime() - b.expiresAt.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

function afterCursor(order: Order, cursor: Cursor): Prisma.RequestWhereInput[] {
  if (order === "newest") {
    return [
      { createdAt: { lt: cursor.createdAt } },
      { createdAt: cursor.createdAt, id: { lt: cursor.id } },
    ];
  }
  const expiresAt = cursor.expiresAt ?? cursor.createdAt;
  return [
    { createdAt: { gt: cursor.createdAt } },
    { createdAt: cursor.createdAt, expiresAt: { gt: expiresAt } },
    { createdAt: cursor.createdAt, expiresAt, id: { gt: cursor.id } },
  ];
}

/**
 * Keyset-paginated on (createdAt, id) newest first, or (createdAt, expiresAt, id) oldest first, so
 * pages stay stable while requests arrive. Several statuses are read as one scan each of the
 * (status, created_at desc, id desc) index and merged here: a single `status IN (…)` cannot walk
 * that index in order, so it would sort every matching row to find the first page.
 */
export async function listRequests(db: Db, query: RequestFilters): Promise<RequestPage> {
  const order = query.order ?? "newest";
  const where: Prisma.RequestWhereInput = {
    ...(query.type ? { type: query.type } : {}),
    ...(query.agent ? { agent: { name: query.agent } } : {}),
    ...(query.target ? { target: query.target } : {}),
    ...(query.decider ? { respondedBy: query.decider } : {}),
  };
  if (query.cursor) where.OR = afterCursor(order, decodeRequestCursor(order, query.cursor));
  const statuses = typeof query.status === "string" ? [query.status] : [...(query.status ?? [])];
  const scans = statuses.length === 0 ? [where] : statuses.map((status) => ({ ...where, status }));
  const orderBy: Prisma.RequestOrderByWithRelationInput[] =
    order === "newest"
      ? [{ createdAt: "desc" }, { id: "desc" }]
      : [{ createdAt: "asc" }, { expiresAt: "asc" }, { id: "asc" }];
  const rows = (
    await Promise.all(
      scans.map((scan) => db.request.findMany({ where: scan, orderBy, take: query.limit + 1 })),
    )
  )
    .flat()
    .sort(order === "newest" ? compareNewestFirst : compareOldestFirst);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const approvals = await findApprovals(db, page);
  return {
    items: page.map((row) => toRequestView(row, approvals.get(row.id))),
    nextCursor: rows.length > query.limit && last ? encodeRequestCursor(order, last) : null,
  };
}

async function viewOf(db: Db, request: Request): Promise<RequestView> {
  return toRequestView(request, (await findApprovals(db, [request])).get(request.id));
}

/** One request, for a human or for the agent it concerns. */
export async function getRequestForActor(db: Db, actor: Actor, id: string): Promise<RequestView> {
  const request = await db.request.findUnique({ where: { id } });
  if (!request) throw new AppError("REQUEST_NOT_FOUND", `no request ${id}`);
  if (actor.kind === "agent" && request.agentId !== actor.agentId) {
    throw new AppError("FORBIDDEN", "agents can read only their own requests");
  }
  return viewOf(db, request);
}

/** One request as `GET /requests/{id}` shows it to a human (the view is the same for every human). */
export async function findRequestView(db: Db, id: string): Promise<RequestView | null> {
  const request = await db.request.findUnique({ where: { id } });
  if (!request) return null;
  return viewOf(db, request);
}

/** A request long-poll's reads: done once the request is no longer pending. */
class RequestRead implements LongPollSource<RequestView> {
  constructor(
    private readonly db: Db,
    private readonly actor: Actor,
    private readonly id: string,
  ) {}

  read(): Promise<RequestView> {
    return getRequestForActor(this.db, this.actor, this.id);
  }

  isDone(request: RequestView): boolean {
    return request.status !== "pending";
  }

  /**
   * Each waiter holds a socket and a subscription: an agent's count, or a person's (every token
   * and session of one user together), is capped.
   */
  hold(): LongPollSlot {
    const { actor } = this;
    return takeLongPollSlot(
      actor.kind === "agent" ? actor.agentId : `user:${actor.userId}`,
      "request_wait",
    );
  }
}

/**
 * One request, held up to `wait` seconds while it is pending, so that each of a session's
 * parallel hook processes can wait on its own request instead of racing on the agent's inbox.
 * Woken by the event that ends the request, through the same hub the inbox long-poll uses.
 */
export function waitForRequest(
  db: Db,
  hub: EventHub,
  actor: Actor,
  id: string,
  query: GetRequestQuery,
  clientGone?: ClientGone,
): LongPollAnswer<RequestView> {
  return new LongPollAnswer({
    hub,
    key: requestEndWaitKey(id),
    deadline: longPollDeadline(Date.now(), query.wait),
    clientGone,
    source: new RequestRead(db, actor, id),
  });
}

export async function listPendingRequestsOfAgent(db: Db, agentId: string): Promise<RequestView[]> {
  const rows = await db.request.findMany({
    where: { agentId, status: "pending" },
    orderBy: { createdAt: "asc" },
  });
  const approvals = await findApprovals(db, rows);
  return rows.map((row) => toRequestView(row, approvals.get(row.id)));
}
