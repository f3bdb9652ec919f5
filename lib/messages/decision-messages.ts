import type { AgentActor } from "../auth/actor";
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
 * Like a new request's row (lib/requests/new-rows.ts), the statement's answer may come after its
 * event: it is expected before the statement is sent and waited for, at most a second. Kept for
 * seconds and few at a time; every long-poll woken by the event may use it, and none need to.
 */
export type DecisionMessage = Omit<MessageView, "id" | "createdAt"> & { agentId: string };

const MAX_KEPT = 256;
const MAX_AGE_MS = 10_000;
const MAX_ANSWER_WAIT_MS = 1_000;

type Kept = { message: Promise<DecisionMessage | undefined>; keptAt: number };

// server.ts (run by tsx) and Next's bundled code load modules separately; one map per process.
const holder = globalThis as typeof globalThis & {
  handshakeDecisionMessages?: Map<string, Kept>;
};
function keptMessages(): Map<string, Kept> {
  holder.handshakeDecisionMessages ??= new Map();
  return holder.handshakeDecisionMessages;
}

/** Before the statement deciding `requestId` is sent: `message` is what it writes, if it writes. */
export function expectDecisionMessage(
  requestId: string,
  message: Promise<DecisionMessage | undefined>,
  now = Date.now(),
): void {
  const kept = keptMessages();
  kept.set(requestId, { message, keptAt: now });
  // A map iterates in insertion order: the oldest come first.
  for (const [id, entry] of kept) {
    if (kept.size <= MAX_KEPT && entry.keptAt > now - MAX_AGE_MS) break;
    kept.delete(id);
  }
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
  const entry = keptMessages().get(event.data.requestId);
  if (!entry || entry.keptAt <= now - MAX_AGE_MS) return undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), MAX_ANSWER_WAIT_MS);
  });
  try {
    const message = await Promise.race([entry.message, late]);
    if (
      message?.agentId !== actor.agentId ||
      message.incarnation !== actor.incarnation ||
      message.to !== event.data.to
    ) {
      return undefined;
    }
    const { agentId: _agentId, ...view } = message;
    return { ...view, id: event.data.messageId, createdAt: event.at };
  } finally {
    clearTimeout(timer);
  }
}
