import path from "node:path";
import { runner } from "node-pg-migrate";

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../prisma/migrations");

/**
 * Applies pending SQL migrations (prisma/migrations/*.sql) with node-pg-migrate, each in its own
 * transaction under an advisory lock, so two starting nodes cannot race. Prisma's own migrate needs
 * a native engine we cannot download; see docs/decisions/001-offline-migrations.md.
 */
export async function applyMigrations(
  databaseUrl: string,
  options: { isQuiet?: boolean } = {},
): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: "up",
    migrationsTable: "pgmigrations",
    checkOrder: true,
    log: options.isQuiet
      ? () => undefined
      : (message: string) => console.log(`[migrate] ${message}`),
  });
  return applied.map((migration) => migration.name);
}
