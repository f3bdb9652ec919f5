import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client";
import { inTransaction } from "../transaction";
import { instantSchema } from "../shared/api/instant";
import { appendEvent } from "./mutations";

// A day means its start in UTC, and a time must say its offset: read in the process's zone, the
// same words would prune a different span on each machine.
const cutoffSchema = z
  .string()
  .transform((value) => (/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value))
  .pipe(instantSchema({ offset: true }))
  .transform((value) => new Date(value))
  // A cutoff in the future would take the record of this very run with it.
  .refine((date) => date.getTime() <= Date.now(), "the cutoff cannot be in the future");

export const pruneInputSchema = z.strictObject({ before: cutoffSchema });
/** As a person writes it: `2026-01-01`, or `2026-01-01T12:00:00+02:00`. */
export type PruneInput = z.input<typeof pruneInputSchema>;

export type PruneResult = {
  before: string;
  events: number;
  requests: number;
  toolCalls: number;
};

/**
 * Retention, the one way past the append-only triggers (migration 006): in one transaction that
 * alone sets `handshake.prune`, removes events, decided requests and tool-call records older than
 * the cutoff, and records what it removed as an event that stays. Pending requests and messages
 * are never removed here.
 */
export async function pruneAuditTrail(db: PrismaClient, input: PruneInput): Promise<PruneResult> {
  const { before } = pruneInputSchema.parse(input);
  return inTransaction(db, async (tx) => {
    // `true`: local to this transaction, so the bypass ends with it whatever happens.
    await tx.$executeRaw`SELECT set_config('handshake.prune', 'on', true)`;
    const requests = await tx.request.deleteMany({
      where: { status: { not: "pending" }, respondedAt: { lt: before } },
    });
    const toolCalls = await tx.toolCall.deleteMany({ where: { createdAt: { lt: before } } });
    const events = await tx.event.deleteMany({ where: { createdAt: { lt: before } } });
    const result: PruneResult = {
      before: before.toISOString(),
      events: events.count,
      requests: requests.count,
      toolCalls: toolCalls.count,
    };
    await appendEvent(tx, "audit.pruned", "audit", result);
    return result;
  });
}
