import type { AgentActor } from "../auth/actor";
import { OwnWrites } from "../realtime/own-writes";
import type { ConsoleEvent } from "../shared/realtime/contract";
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
 */
export type DecisionMessage = Omit<MessageView, "id" | "createdAt"> & { agentId: string };

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
 * The message `event` announces, as the agent's inbox would read it, if this node decided the
 * request it answers and the message is this agent's incarnation's; undefined otherwise, and then
 * the caller reads the inbox.
 */
export async function messageWokenBy(
  event: ConsoleEvent,
  actor: AgentActor,
  now = Date.now(),
): Promise<MessageView | undefined> {
  if (event.kind !== "message.sent" || event.data.requestId === undefined) return undefined;
  const message = await decisionMessages.find(event.data.requestId, now);
  if (
    message?.agentId !== actor.agentId ||
    message.incarnation !== actor.incarnation ||
    message.to !== event.data.to
  ) {
    return undefined;
  }
  const { agentId: _agentId, ...view } = message;
  return { ...view, id: event.data.messageId, createdAt: event.at };
}
