import type { Actor, AgentActor } from "../auth/actor";
import { findAgentByName, lockActingAgent, lockAgent } from "../agents/data";
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
    const isBroadcast = input.to === "*";
    const found = isBroadcast
      ? await tx.agent.findMany({
          where: { status: { notIn: ["shutdown", "crashed"] } },
          select: { id: true },
          orderBy: { id: "asc" },
        })
      : [await findAgentByName(tx, input.to)];
    // Read under each recipient's lock: a respawn committing in between would otherwise leave the
    // message with an incarnation that has already ended. Locks are taken in id order, the order
    // of every transaction that locks several agents (endAgentsOwnedBy): in name order, a
    // broadcast and a token's revocation each held an agent the other waited for.
    const locked: Agent[] = [];
    for (const recipient of found) locked.push(await lockAgent(tx, recipient.id));
    // An agent that ended while the broadcast waited for its lock is no longer among "everyone";
    // a message to one agent by name is refused instead.
    const ended = locked.find((recipient) => !isAgentActive(recipient.status));
    if (ended && !isBroadcast) {
      throw new AppError(
        "AGENT_NOT_ACTIVE",
        `agent '${ended.name}' is ${ended.status} and cannot receive messages`,
      );
    }
    const recipients = locked
      .filter((recipient) => isAgentActive(recipient.status))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const ids: bigint[] = [];
    for (const recipient of recipients) {
      const id = await deliverMessage(tx, {
        from,
        to: recipient.name,
        agentId: recipient.id,
        incarnation: recipient.incarnation,
        type: isBroadcast ? "broadcast" : "message",
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
 * ack beyond that would silently skip messages that arrive later. Only the incarnation acting now
 * moves it: an ended one's ack, let through before its token stopped working, moved the mark past
 * messages carried over to its successor, which then never read them (red team, round eleven).
 */
export async function ackInbox(
  db: PrismaClient,
  acting: Pick<AgentActor, "agentId" | "incarnation">,
  upTo: number,
): Promise<{ ackedUpTo: number }> {
  const { agentId, incarnation } = acting;
  return inTransaction(db, async (tx) => {
    await lockActingAgent(tx, agentId, incarnation);
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
