import { requireDatabaseUrl } from "../lib/env";
import { applyMigrations } from "../lib/migrations";

const applied = await applyMigrations(requireDatabaseUrl());
console.log(applied.length ? `applied ${applied.join(", ")}` : "database is up to date");
