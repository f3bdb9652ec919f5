import pg from "pg";
import { requireDatabaseUrl } from "../../lib/env";

/**
 * A transaction of its own connection that ran `sql` and holds what it locked until `release`,
 * which commits it (once, however often it is called). `query` runs more in that transaction.
 */
export async function holdLock(sql: string, values: unknown[] = []) {
  const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
  await holder.connect();
  await holder.query("BEGIN");
  await holder.query(sql, values);
  let released: Promise<void> | undefined;
  return {
    query: (more: string, moreValues: unknown[] = []) => holder.query(more, moreValues),
    release: () => (released ??= holder.query("COMMIT").then(() => holder.end())),
  };
}
