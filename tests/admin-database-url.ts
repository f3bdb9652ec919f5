import { env } from "../lib/env";

// Apart from tests/test-database.ts, which test files import before they point DATABASE_URL at a
// database of their own: importing lib/env there would fix `env` to the shared one first.

/** The server the suites make their scratch databases on: DATABASE_URL's, else the local one. */
export function adminDatabaseUrl(): string {
  return env.DATABASE_URL ?? env.TEST_ADMIN_DATABASE_URL;
}
