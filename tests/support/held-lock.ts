import pg from "pg";
import { requireDatabaseUrl } from "../../lib/env";

/** Sessions that wait behind `holderPid`: on its locks, or on a lock one of them took first. */
const WAITING_BEHIND = `
  WITH RECURSIVE waiting(pid) AS (
    SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND $1::int = ANY(pg_blocking_pids(pid))
    UNION
    SELECT activity.pid FROM pg_stat_activity activity
      JOIN waiting ON waiting.pid = ANY(pg_blocking_pids(activity.pid))
      WHERE activity.datname = current_database()
  )
  SELECT pid FROM waiting`;

/**
 * A transaction of its own connection that ran `sql` and holds what it locked until `release`,
 * which commits it (once, however often it is called). `query` runs more in that transaction.
 * `untilWaiting(n)` resolves, with their backends' pids, once n other sessions wait behind it: a
 * test orders the calls it queues by that, not by a pause a loaded machine can outlast.
 */
export async function holdLock(sql: string, values: unknown[] = []) {
  const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
  await holder.connect();
  await holder.query("BEGIN");
  await holder.query(sql, values);
  const { rows } = await holder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const holderPid = rows[0]?.pid;
  let released: Promise<void> | undefined;
  return {
    query: (more: string, moreValues: unknown[] = []) => holder.query(more, moreValues),
    release: () => (released ??= holder.query("COMMIT").then(() => holder.end())),
    untilWaiting: async (count: number, timeoutMs = 10_000): Promise<number[]> => {
      // Its own connection: the holder's transaction would see one snapshot of the activity.
      const watcher = new pg.Client({ connectionString: requireDatabaseUrl() });
      await watcher.connect();
      try {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const waiting = await watcher.query<{ pid: number }>(WAITING_BEHIND, [holderPid]);
          if (waiting.rows.length >= count) return waiting.rows.map((row) => row.pid);
          if (Date.now() > deadline) {
            throw new Error(
              `${count} sessions did not queue behind the held lock in ${timeoutMs} ms`,
            );
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await watcher.end();
      }
    },
  };
}
