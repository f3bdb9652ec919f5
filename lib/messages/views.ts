import type { Message } from "../generated/prisma/client";

export type MessageView = {
  id: number;
  from: string;
  to: string;
  type: string;
  content: string;
  metadata: Record<string, unknown>;
  /** The recipient agent's incarnation it belongs to; null for the Lead's inbox. */
  incarnation: number | null;
  /** Set when it ended undelivered, with the incarnation it was sent to (docs/decisions/011). */
  cancelledAt: string | null;
  createdAt: string;
};

export function toMessageView(message: Message): MessageView {
  return {
    id: Number(message.id),
    from: message.sender,
    to: message.recipient,
    type: message.type,
    content: message.content,
    metadata: message.metadata as Record<string, unknown>,
    incarnation: message.incarnation,
    cancelledAt: message.cancelledAt?.toISOString() ?? null,
    createdAt: message.createdAt.toISOString(),
  };
}
