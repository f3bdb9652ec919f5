import type { AgentActor } from "../auth/actor";
import { OwnWrites } from "../realtime/own-writes";
import type { WakingEvent } from "../realtime/event-hub";
import type { MessageView } from "./views";

/**
 * The message a decision this node has just made sends its agent, kept so that the agent's
 * long-poll, woken on this node by that message's `message.sent` event, answers with it instead of
 * reading the inbox again (decision 040). The common decision (lib/requests/common-decision.ts)
 * writes the message inside its one statement and returns only the request: everything the
 * message holds is known before the statement is sent except its id and its time, which the event
 * names. The message and its event are written in that one transaction, and both columns are the
 * transaction's time to the millisecond, so the event's `at` is the message's `createdAt`.
 *
 * The statement commits on its own, so the message is expected before it is sent
 * (lib/realtime/own-writes.ts); every long-poll the event wakes may use it, and none need to.
 *
 * The bridge publishes every event it sees in id order, but not every event: one it passed as a
 * gap, or one committed before it started, is never published. A message to the agent that
 * committed that way wakes nobody, and a later decision's message would be answered over it. So
 * the statement also returns the agent's live message before the decision's own (`previousId`,
 * migration 024), and a long-poll answers with the decision's message only when that one is at or
 * below its cursor: nothing lies between.
 */
export type DecisionMessage = Omit<MessageView, "id" | "createdAt"> & {
  agentId: string;
  previousId: number | null;
};

const decisionMessages = new OwnWrites<DecisionMessage>("handshakeDecisionMessages");

/** Before the statement deciding `requestId` is sent: `message` is what it writes, if it writes. */
export function expectDecisionMessage(
  requestId: string,
  message: Promise<DecisionMessage | undefined>,
  now = Date.now(),
): void {
  decisionMessages.keep(requestId, message, now);
}

/**
 * The message `event` announces, exactly as the agent's inbox read after `after` would return it
 * first, if this node decided the request it answers, the message is this agent's incarnation's,
 * and no live message lies between `after` and it; undefined otherwise, and then the caller reads
 * the inbox.
 */
export async function messageWokenBy(
  event: WakingEvent,
  actor: AgentActor,
  after: bigint,
  now = Date.now(),
): Promise<MessageView | undefined> {
  if (event.kind !== "message.sent" || event.data.requestId === undefined) return undefined;
  const message = await decisionMessages.find(event.data.requestId, now);
  if (
    message?.agentId !== actor.agentId ||
    message.incarnation !== actor.incarnation ||
    message.to !== event.data.to ||
    BigInt(event.data.messageId) <= after ||
    (message.previousId !== null && BigInt(message.previousId) > after)
  ) {
    return undefined;
  }
  // In the order a read gives them: toMessageView's fields, and the metadata's keys as jsonb keeps
  // them (shorter first, then by their bytes).
  return {
    id: event.data.messageId,
    from: message.from,
    to: message.to,
    type: message.type,
    content: message.content,
    metadata: Object.fromEntries(
      Object.entries(message.metadata).sort(
        ([left], [right]) => left.length - right.length || (left < right ? -1 : 1),
      ),
    ),
    incarnation: message.incarnation,
    cancelledAt: message.cancelledAt,
    createdAt: event.at,
  };
}
