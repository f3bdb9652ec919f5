import type pg from "pg";
import type { Db } from "../db";
import { Prisma } from "../generated/prisma/client";
import type { ConsoleEvent } from "../shared/events/catalog";

export const MAX_EVENTS_PAGE = 500;

/**
 * How long a missing id may hold back the ids committed after it. Ids are taken at insert and
 * become visible at commit, so a lower id can commit after a higher one; a reader that moved its
 * cursor past the higher id would never see the lower. Ids of rolled-back transactions never
 * appear, so after this wait a gap is taken as permanent. Known limitation: an event whose
 * transaction stays open longer than this after a later event committed is skipped by a reader
 * that read the later one.
 */
export const GAP_WAIT_MS = 1_000;

/** An event younger than GAP_WAIT_MS, by the database's clock, at the read's statement. */
const IS_YOUNG = Prisma.sql`
  created_at > clock_timestamp() - make_interval(secs => ${GAP_WAIT_MS / 1_000})`;

type Sighting = { id: bigint | string; isYoung: boolean };

/**
 * How many of these events, in id order after `previousId`, come before the first missing id
 * that may still commit: one whose next event is young.
 */
function countBeforeYoungGap(events: Sighting[], previousId: number): number {
  let expectedId = previousId + 1;
  for (const [index, event] of events.entries()) {
    if (Number(event.id) !== expectedId && event.isYoung) return index;
    expectedId = Number(event.id) + 1;
  }
  return events.length;
}

/**
 * A reader's page of events after its cursor. It ends before a missing id for as long as the event
 * after that id is younger than GAP_WAIT_MS (the event's `created_at`: when `inTransaction` wrote
 * it, just before its commit, or a hot statement's start; against the database's clock): oldest
 * first, a cursor moved
 * to the page's last id passes no event still in flight, and a later read returns the rest; newest
 * first, the page starts below it, so its first id is a cursor a late subscriber can start from.
 */
export async function listEventsAfter(
  db: Db,
  after: number,
  limit = MAX_EVENTS_PAGE,
  order: "asc" | "desc" = "asc",
): Promise<ConsoleEvent[]> {
  const take = Math.min(limit, MAX_EVENTS_PAGE);
  if (order === "desc") return listNewestEventsAfter(db, after, take);
  const rows = await db.$queryRaw<(EventRow & Sighting)[]>`
    SELECT id, kind, subject, data, created_at AS "createdAt", ${IS_YOUNG} AS "isYoung"
    FROM events WHERE id > ${after} ORDER BY id ASC LIMIT ${take}`;
  return rows.slice(0, countBeforeYoungGap(rows, after)).map(toConsoleEvent);
}

/**
 * The newest ids after `after`, oldest first, and how many of them lie below the first missing id
 * that may still commit. That id is looked for among the newest MAX_EVENTS_PAGE ids only: one
 * further down would need as many events committed after it within GAP_WAIT_MS.
 */
async function readNewestIds(
  db: Db,
  after: number,
): Promise<{ ascending: Sighting[]; settledCount: number }> {
  const newest = await db.$queryRaw<Sighting[]>`
    SELECT id, ${IS_YOUNG} AS "isYoung"
    FROM events WHERE id > ${after} ORDER BY id DESC LIMIT ${MAX_EVENTS_PAGE}`;
  const ascending = newest.reverse();
  const isEverythingAfter = ascending.length < MAX_EVENTS_PAGE;
  const belowLowest = isEverythingAfter ? after : Number(ascending[0]?.id ?? after) - 1;
  return { ascending, settledCount: countBeforeYoungGap(ascending, belowLowest) };
}

/** Newest first, below the first missing id that may still commit. */
async function listNewestEventsAfter(db: Db, after: number, take: number): Promise<ConsoleEvent[]> {
  const { ascending, settledCount } = await readNewestIds(db, after);
  const firstUnsettled = ascending[settledCount];
  const rows = await db.event.findMany({
    where: { id: { gt: BigInt(after), ...(firstUnsettled && { lt: BigInt(firstUnsettled.id) }) } },
    orderBy: { id: "desc" },
    take,
  });
  return rows.map(toConsoleEvent);
}

/**
 * The events after `after` as committed now, gaps and all, for the event bridge, which waits on
 * gaps by its own clock (since it first saw an id above one).
 */
export async function listCommittedEventsAfter(db: Db, after: number): Promise<ConsoleEvent[]> {
  const rows = await db.event.findMany({
    where: { id: { gt: BigInt(after) } },
    orderBy: { id: "asc" },
    take: MAX_EVENTS_PAGE,
  });
  return rows.map(toConsoleEvent);
}

/**
 * The same page as `listCommittedEventsAfter(db, after)`, on a plain `pg` connection: the event
 * bridge reads on its LISTEN connection, which costs a third of a read through Prisma's pool and
 * sits on the path of every live update (docs/PERFORMANCE.md).
 */
export async function listCommittedEventsAfterOn(
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

/**
 * Where a reader that skips the history starts: the newest id below any that may still commit
 * (as `listEventsAfter` newest first), so the event in flight still comes after it.
 */
export async function findNewestEventId(db: Db): Promise<number> {
  const { ascending, settledCount } = await readNewestIds(db, 0);
  return Number(ascending[settledCount - 1]?.id ?? 0);
}
