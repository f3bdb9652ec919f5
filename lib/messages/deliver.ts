import { lockAgentRow } from "../agents/data";
import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import type { Prisma } from "../generated/prisma/client";
import { MESSAGE_TYPES } from "./schema";

export type Delivery = {
  from: string;
  /** An agent name, or "lead". */
  to: string;
  /** The recipient agent's id; null for the Lead's inbox. */
  agentId: string | null;
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
      type: delivery.type,
      content: delivery.content,
      metadata: delivery.metadata ?? {},
    },
    select: { id: true },
  });
  const id = Number(message.id);
  await appendEvent(db, "message.sent", `inbox:${delivery.to}`, {
    messageId: id,
    from: delivery.from,
    to: delivery.to,
    type: delivery.type,
    ...(delivery.metadata?.requestId ? { requestId: delivery.metadata.requestId } : {}),
  });
  return id;
}
