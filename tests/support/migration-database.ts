import { readdirSync } from "node:fs";
import { runner } from "node-pg-migrate";
import { afterAll, beforeAll, inject } from "vitest";
import { MIGRATIONS_DIR } from "../../lib/migrations";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

const migrationFiles = () => readdirSync(MIGRATIONS_DIR);

/**
 * A scratch database for a test of one migration on rows made before it, dropped after the file:
 * `migrateBefore("030_")` applies every migration before that one, `migrateRest()` the others and
 * returns what it applied.
 */
export function migrationDatabase(label: string) {
  let adminUrl = "";
  let databaseUrl = "";
  beforeAll(async () => {
    adminUrl = inject("adminDatabaseUrl");
    databaseUrl = await createScratchDatabase(adminUrl, label);
  });
  afterAll(async () => {
    await dropScratchDatabase(adminUrl, databaseUrl);
  });
  const migrate = (count?: number) =>
    runner({
      databaseUrl,
      dir: MIGRATIONS_DIR,
      direction: "up",
      migrationsTable: "pgmigrations",
      checkOrder: true,
      ...(count === undefined ? {} : { count }),
      log: () => undefined,
    });
  return {
    url: () => databaseUrl,
    migrateBefore: (file: string) => migrate(migrationFiles().filter((name) => name < file).length),
    migrateRest: () => migrate(),
    countFrom: (file: string) => migrationFiles().filter((name) => name >= file).length,
  };
}
