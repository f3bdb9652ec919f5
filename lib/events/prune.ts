import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client";
import { inTransaction } from "../transaction";
import { appendEvent } from "./mutations";

export const pruneInputSchema = z.strictObject({
  // A cutoff in the future would take the record of this very run with it.
  before: z.coerce
    .date()
    .refine((date) => date.getTime() <= Date.now(), "the cutoff cannot be in the future"),
});
export type PruneInput = z.infer<typeof pruneInputSchema>;

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
