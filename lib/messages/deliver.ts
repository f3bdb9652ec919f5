import { lockAgentRow } from "../agents/data";
import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import type { Prisma } from "../generated/prisma/client";
import { MESSAGE_TYPES } from "./schema";
import { databaseNow } from "../database-clock";

export type Delivery = {
  from: string;
  /** An agent name, or "lead". */
  to: string;
  /** The recipient agent's id; null for the Lead's inbox. */
  agentId: string | null;
  /** The recipient's incarnation the message belongs to; null for the Lead's inbox. */
  incarnation: number | null;
  type: string;
  content: string;
  metadata?: Prisma.InputJsonObject;
};

/** Stores one message and its event in the caller's transaction. Validation happens before. */
export async function deliverMessage(db: Db, delivery: Delivery): Promise<number> {
  if (!MESSAGE_TYPES.includes(delivery.type)) {
    // Message types are a closed list; an unknown one is a bug in the caller, never user input.
    throw new Error(`unknown message type '${delivery.type}'`);
  }
  // Inboxes are read by id cursor, so an agent's messages must commit in id order: under the
  // recipient's row lock (held to commit) a later message cannot take its id before this one commits.
  if (delivery.agentId) await lockAgentRow(db, delivery.agentId);
  const message = await db.message.create({
    data: {
      sender: delivery.from,
      recipient: delivery.to,
      agentId: delivery.agentId,
      incarnation: delivery.incarnation,
      type: delivery.type,
      content: delivery.content,
      metadata: delivery.metadata ?? {},
    },
    select: { id: true },
  });
  const id = Number(message.id);
  const requestId = delivery.metadata?.requestId;
  await appendEvent(db, "message.sent", `inbox:${delivery.to}`, {
    messageId: id,
    from: delivery.from,
    to: delivery.to,
    type: delivery.type,
    ...(typeof requestId === "string" && requestId ? { requestId } : {}),
  });
  return id;
}

/** Messages the worker hands to the model; every other type is protocol, routed by the worker. */
export const PLAIN_MESSAGE_TYPES = ["message", "broadcast"];

/**
 * What happens to an ended incarnation's unacknowledged messages (docs/decisions/011). Protocol
 * messages belong to the incarnation they were sent to and are never delivered to another. Plain
 * messages carry over to the next incarnation after a crash (the work was interrupted, not
 * ended), marked with the incarnation they were sent to; after a stop, forced or approved, the
 * Lead knows the agent is gone, so they end as not delivered.
 */
export async function settleUnreadMessages(
  db: Db,
  agent: { id: string; incarnation: number; inboxAckedId: bigint },
  nextIncarnation: number | null,
): Promise<void> {
  const unread = {
    agentId: agent.id,
    id: { gt: agent.inboxAckedId },
    incarnation: { lt: nextIncarnation ?? agent.incarnation + 1 },
    cancelledAt: null,
  };
  if (nextIncarnation !== null) {
    // A mark already there wins: it names the incarnation the message was first sent to.
    await db.$executeRaw`
      UPDATE messages
      SET metadata = jsonb_build_object('sentToIncarnation', incarnation) || metadata,
          incarnation = ${nextIncarnation}
      WHERE agent_id = ${agent.id}::uuid AND id > ${agent.inboxAckedId}
        AND incarnation < ${nextIncarnation} AND cancelled_at IS NULL
        AND type = ANY(${PLAIN_MESSAGE_TYPES})`;
  }
  await db.message.updateMany({ where: unread, data: { cancelledAt: databaseNow() } });
}
