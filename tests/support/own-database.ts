import { inject } from "vitest";
import { applyMigrations } from "../../lib/migrations";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

/**
 * Points this test file at a database of its own, made and migrated now, and returns what drops
 * it. Called from `vi.hoisted`, it runs before the file's imports, which then bind to it. For a
 * file whose calls reach every row of a table (a broadcast writes to, and locks, every active
 * agent): on the shared database they would touch other files' agents (decision 079).
 */
export async function useOwnDatabase(prefix: string): Promise<() => Promise<void>> {
  const adminUrl = inject("adminDatabaseUrl");
  const databaseUrl = await createScratchDatabase(adminUrl, prefix);
  await applyMigrations(databaseUrl, { isQuiet: true });
  process.env.DATABASE_URL = databaseUrl;
  return () => dropScratchDatabase(adminUrl, databaseUrl);
}
