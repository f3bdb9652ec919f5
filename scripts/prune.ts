import { parseArgs } from "node:util";
import { createDb } from "../lib/db";
import { requireDatabaseUrl } from "../lib/env";
import { pruneAuditTrail, pruneInputSchema } from "../lib/events/prune";

// `npm run prune -- --before 2026-01-01`: removes the audit trail older than the date and records
// what it removed (docs/decisions/011).
const { values } = parseArgs({ options: { before: { type: "string" } } });
const input = { before: values.before ?? "" };
const parsed = pruneInputSchema.safeParse(input);
if (!parsed.success) {
  console.error(
    "usage: npm run prune -- --before YYYY-MM-DD (a day, from its start in UTC) or an ISO time " +
      `with its offset (${parsed.error.issues[0]?.message ?? "invalid"})`,
  );
  process.exit(2);
}
const db = createDb(requireDatabaseUrl());
try {
  const result = await pruneAuditTrail(db, input);
  console.log(
    `pruned before ${result.before}: ${result.events} events, ${result.requests} decided requests, ${result.toolCalls} tool calls`,
  );
} finally {
  await db.$disconnect();
}
