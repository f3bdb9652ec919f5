import { afterAll, inject } from "vitest";
import { applyMigrations } from "../../lib/migrations";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

/**
 * Points this test file at a database of its own, made and migrated now, and drops it after the
 * file's last hook. Called from `vi.hoisted`, it runs before the file's imports, which then bind
 * to it. For a file whose calls reach every row of a table (a broadcast writes to and locks every
 * active agent, a sweep ahead of the clock takes every agent, `LOCK TABLE` holds every file's
 * inserts): on the shared database they would touch other files' rows (decision 079).
 */
export async function useOwnDatabase(prefix: string): Promise<void> {
  const adminUrl = inject("adminDatabaseUrl");
  const databaseUrl = await createScratchDatabase(adminUrl, prefix);
  const drop = () => dropScratchDatabase(adminUrl, databaseUrl);
  try {
    await applyMigrations(databaseUrl, { isQuiet: true });
  } catch (error) {
    await drop();
    throw error;
  }
  process.env.DATABASE_URL = databaseUrl;
  // Registered first, so it runs after the file's own hooks have closed their connections.
  afterAll(drop);
}
