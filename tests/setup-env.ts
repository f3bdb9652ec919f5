import { inject } from "vitest";

// Runs before each test file's imports, so lib/env.ts sees the scratch database.
process.env.DATABASE_URL = inject("databaseUrl");
process.env.HANDSHAKE_SECRET ??= "test-secret-test-secret-test-secret-0123456789";
