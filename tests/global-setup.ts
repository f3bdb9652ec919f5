import type { TestProject } from "vitest/node";
import { applyMigrations } from "../lib/migrations";
import { adminDatabaseUrl } from "./admin-database-url";
import { createScratchDatabase, dropScratchDatabase } from "./test-database";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    adminDatabaseUrl: string;
  }
}

// One fresh database per run, migrated from the SQL files exactly as production is, dropped after.
export default async function setup(project: TestProject) {
  const adminUrl = adminDatabaseUrl();
  const databaseUrl = await createScratchDatabase(adminUrl, "handshake_test");
  await applyMigrations(databaseUrl, { isQuiet: true });
  project.provide("databaseUrl", databaseUrl);
  project.provide("adminDatabaseUrl", adminUrl);
  return async () => {
    await dropScratchDatabase(adminUrl, databaseUrl);
  };
}
