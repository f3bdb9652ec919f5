import type { Db } from "../db";
import type { ConsoleEvent } from "../realtime/contract";

export const MAX_EVENTS_PAGE = 500;

export async function listEventsAfter(
  db: Db,
  after: number,
  limit = MAX_EVENTS_PAGE,
  order: "asc" | "desc" = "asc",
): Promise<ConsoleEvent[]> {
  const rows = await db.event.findMany({
    where: { id: { gt: BigInt(after) } },
    orderBy: { id: order },
    take: Math.min(limit, MAX_EVENTS_PAGE),
  });
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    subject: row.subject,
    at: row.createdAt.toISOString(),
    data: row.data as Record<string, unknown>,
  }));
}

export async function findNewestEventId(db: Db): Promise<number> {
  const newest = await db.event.aggregate({ _max: { id: true } });
  return Number(newest._max.id ?? 0);
}
