import type { Message } from "../generated/prisma/client";

export type MessageView = {
  id: number;
  from: string;
  to: string;
  type: string;
  content: string;
  metadata: Record<string, unknown>;
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
    createdAt: message.createdAt.toISOString(),
  };
}
