import type { Db } from "../../lib/db";

/** The database's own time now, read afresh: the clock every judgement of a time is made by. */
export async function readDatabaseNowMs(db: Db): Promise<number> {
  const [{ now }] = await db.$queryRaw<[{ now: Date }]>`SELECT clock_timestamp() AS now`;
  return now.getTime();
}
