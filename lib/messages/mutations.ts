import type { Actor } from "../auth/actor";
import { findAgentByName, lockAgent } from "../agents/data";
import { isAgentActive } from "../shared/agents/schema";
import { AppError } from "../errors";
import type { Agent, PrismaClient } from "../generated/prisma/client";
import { deliverMessage } from "./deliver";
import type { SendMessageInput } from "./schema";
import { toMessageView, type MessageView } from "./views";
import { inTransaction } from "../transaction";

export type SentMessages = { items: MessageView[] };

/**
 * A plain message (or, from the Lead, a broadcast to every active agent). Every recipient is
 * checked before anything is stored: a refused message leaves no partial delivery behind.
 */
export async function sendMessage(
  db: PrismaClient,
  actor: Actor,
  input: SendMessageInput,
): Promise<SentMessages> {
  const from = actor.kind === "agent" ? actor.name : "lead";
  if (input.to === "*" && actor.kind !== "human") {
    throw new AppError("FORBIDDEN", "only the Lead can broadcast");
  }
  if (input.to === from)
    throw new AppError("INVALID_INPUT", "to: cannot send a message to yourself");
  return inTransaction(db, async (tx) => {
    if (input.to === "lead") {
      const id = await deliverMessage(tx, {
        from,
        to: "lead",
        agentId: null,
        incarnation: null,
        type: "message",
        content: input.content,
      });
      return { items: [toMessageView(await tx.message.findUniqueOrThrow({ where: { id } }))] };
    }
    const found =
      input.to === "*"
        ? await tx.agent.findMany({
            where: { status: { notIn: ["shutdown", "crashed"] } },
            orderBy: { name: "asc" },
          })
        : [await findAgentByName(tx, input.to)];
    // Read under each recipient's lock (taken in name order): a respawn committing in between
    // would otherwise leave the message with an incarnation that has already ended.
    const recipients: Agent[] = [];
    for (const recipient of found) recipients.push(await lockAgent(tx, recipient.id));
    for (const recipient of recipients) {
      if (!isAgentActive(recipient.status)) {
        throw new AppError(
          "AGENT_NOT_ACTIVE",
          `agent '${recipient.name}' is ${recipient.status} and cannot receive messages`,
        );
      }
    }
    const ids: bigint[] = [];
    for (const recipient of recipients) {
      const id = await deliverMessage(tx, {
        from,
        to: recipient.name,
        agentId: recipient.id,
        incarnation: recipient.incarnation,
        type: input.to === "*" ? "broadcast" : "message",
        content: input.content,
      });
      ids.push(BigInt(id));
    }
    const stored = await tx.message.findMany({
      where: { id: { in: ids } },
      orderBy: { id: "asc" },
    });
    return { items: stored.map(toMessageView) };
  });
}

/**
 * Moves the agent's processed-up-to mark. Never backwards, and never past its newest message: an
 * ack beyond that would silently skip messages that arrive later.
 */
export async function ackInbox(
  db: PrismaClient,
  agentId: string,
  upTo: number,
): Promise<{ ackedUpTo: number }> {
  return inTransaction(db, async (tx) => {
    const newest = await tx.message.findFirst({
      where: { agentId },
      orderBy: { id: "desc" },
      select: { id: true },
    });
    const limit = newest?.id ?? 0n;
    const target = BigInt(upTo) > limit ? limit : BigInt(upTo);
    await tx.agent.updateMany({
      where: { id: agentId, inboxAckedId: { lt: target } },
      data: { inboxAckedId: target },
    });
    const agent = await tx.agent.findUniqueOrThrow({
      where: { id: agentId },
      select: { inboxAckedId: true },
    });
    return { ackedUpTo: Number(agent.inboxAckedId) };
  });
}
