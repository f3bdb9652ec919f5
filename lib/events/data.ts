import type pg from "pg";
import type { Db } from "../db";
import type { ConsoleEvent } from "../shared/events/catalog";

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
  return rows.map(toConsoleEvent);
}

/**
 * The same page as `listEventsAfter(db, after)`, on a plain `pg` connection: the event bridge
 * reads on its LISTEN connection, which costs a third of a read through Prisma's pool and sits on
 * the path of every live update (docs/PERFORMANCE.md).
 */
export async function listEventsAfterOn(
  connection: pg.ClientBase,
  after: number,
): Promise<ConsoleEvent[]> {
  const { rows } = await connection.query<EventRow>(
    `SELECT id, kind, subject, data, created_at AS "createdAt" FROM events
     WHERE id > $1 ORDER BY id ASC LIMIT $2`,
    [after, MAX_EVENTS_PAGE],
  );
  return rows.map(toConsoleEvent);
}

type EventRow = {
  /** bigint: Prisma returns a BigInt, `pg` a decimal string. */
  id: bigint | string;
  kind: string;
  subject: string;
  data: unknown;
  createdAt: Date;
};

function toConsoleEvent(row: EventRow): ConsoleEvent {
  return {
    id: Number(row.id),
    subject: row.subject,
    at: row.createdAt.toISOString(),
    // Written only through appendEvent, whose payloads the catalog types.
    ...({ kind: row.kind, data: row.data } as Pick<ConsoleEvent, "kind" | "data">),
  } as ConsoleEvent;
}

export async function findNewestEventId(db: Db): Promise<number> {
  const newest = await db.event.aggregate({ _max: { id: true } });
  return Number(newest._max.id ?? 0);
}
