import type { Actor } from "../auth/actor";
import type { Db } from "../db";
import { AppError } from "../errors";
import type { Prisma, Request } from "../generated/prisma/client";
import type { ListRequestsQuery, RequestStatus } from "./schema";
import { toRequestView, type RequestView } from "./views";

export type RequestPage = { items: RequestView[]; nextCursor: string | null };

type Cursor = { createdAt: Date; id: string };

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`).toString("base64url");
}

function decodeCursor(raw: string): Cursor {
  const [at, id] = Buffer.from(raw, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at ?? "");
  if (!id || !/^req_[0-9a-f]{32}$/.test(id) || Number.isNaN(createdAt.getTime())) {
    throw new AppError("INVALID_INPUT", "cursor: not a cursor this API returned");
  }
  return { createdAt, id };
}

/** The parsed query, or a caller's own filters with one status or several. */
export type RequestFilters = Omit<ListRequestsQuery, "status"> & {
  status?: RequestStatus | readonly RequestStatus[] | undefined;
};

function compareNewestFirst(a: Request, b: Request): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * Newest first, keyset-paginated on (createdAt, id) so pages stay stable while requests arrive.
 * Several statuses are read as one scan each of the (status, created_at desc, id desc) index and
 * merged here: a single `status IN (…)` cannot walk that index in order, so it would sort every
 * matching row to find the newest page.
 */
export async function listRequests(db: Db, query: RequestFilters): Promise<RequestPage> {
  const where: Prisma.RequestWhereInput = {
    ...(query.type ? { type: query.type } : {}),
    ...(query.agent ? { agent: { name: query.agent } } : {}),
    ...(query.decider ? { respondedBy: query.decider } : {}),
  };
  if (query.cursor) {
    const cursor = decodeCursor(query.cursor);
    where.OR = [
      { createdAt: { lt: cursor.createdAt } },
      { createdAt: cursor.createdAt, id: { lt: cursor.id } },
    ];
  }
  const statuses = typeof query.status === "string" ? [query.status] : [...(query.status ?? [])];
  const scans = statuses.length === 0 ? [where] : statuses.map((status) => ({ ...where, status }));
  const rows = (
    await Promise.all(
      scans.map((scan) =>
        db.request.findMany({
          where: scan,
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
          take: query.limit + 1,
        }),
      ),
    )
  )
    .flat()
    .sort(compareNewestFirst);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(toRequestView),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null,
  };
}

/** One request, for a human or for the agent it concerns. */
export async function getRequestForActor(db: Db, actor: Actor, id: string): Promise<RequestView> {
  const request = await db.request.findUnique({ where: { id } });
  if (!request) throw new AppError("REQUEST_NOT_FOUND", `no request ${id}`);
  if (actor.kind === "agent" && request.agentId !== actor.agentId) {
    throw new AppError("FORBIDDEN", "agents can read only their own requests");
  }
  return toRequestView(request);
}

export async function listPendingRequestsOfAgent(db: Db, agentId: string): Promise<RequestView[]> {
  const rows = await db.request.findMany({
    where: { agentId, status: "pending" },
    orderBy: { createdAt: "asc" },
  });
  return rows.map(toRequestView);
}
