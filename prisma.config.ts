import path from "node:path";
import { defineConfig } from "prisma/config";

// Prisma's CLI insists on a native schema-engine binary before `generate`, and its download host is
// unreachable here. Only the client generator is used (migrations are SQL run by node-pg-migrate,
// see docs/decisions/001-offline-migrations.md), so point it at a stub that fails loudly if anyone
// tries `prisma migrate` or `prisma db push`.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve("scripts/prisma-schema-engine-stub.sh");

export default defineConfig({
  schema: "prisma/schema.prisma",
});
