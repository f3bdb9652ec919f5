import { holdLongPoll } from "../agents/limits";
import type { AgentActor } from "../auth/actor";
import type { Db } from "../db";
import { inboxWaitKey, type EventHub } from "../realtime/event-hub";
import type { InboxQuery } from "./schema";
import { toMessageView, type MessageView } from "./views";

export type Inbox = { messages: MessageView[]; cursor: number };

async function readAfter(
  db: Db,
  actor: AgentActor,
  after: bigint,
  limit: number,
): Promise<MessageView[]> {
  // Only this incarnation's messages: an ended one's never reach a new one (docs/decisions/011).
  const rows = await db.message.findMany({
    where: {
      agentId: actor.agentId,
      incarnation: actor.incarnation,
      cancelledAt: null,
      id: { gt: after },
    },
    orderBy: { id: "asc" },
    take: limit,
  });
  return rows.map(toMessageView);
}

/**
 * An agent's messages after a cursor (default: what it has acknowledged). Reading deletes nothing,
 * so a crash between read and processing loses nothing. With `wait`, an empty inbox is held open
 * until a message arrives or the wait ends.
 */
export async function readInbox(
  db: Db,
  hub: EventHub,
  actor: AgentActor,
  query: InboxQuery,
  signal?: AbortSignal,
): Promise<Inbox> {
  if (query.wait === 0) return readInboxNow(db, hub, actor, query, signal);
  return holdLongPoll(actor.agentId, () => readInboxNow(db, hub, actor, query, signal));
}

async function readInboxNow(
  db: Db,
  hub: EventHub,
  actor: AgentActor,
  query: InboxQuery,
  signal?: AbortSignal,
): Promise<Inbox> {
  let after: bigint;
  if (query.after !== undefined) {
    after = BigInt(query.after);
  } else {
    const agent = await db.agent.findUniqueOrThrow({
      where: { id: actor.agentId },
      select: { inboxAckedId: true },
    });
    after = agent.inboxAckedId;
  }
  const deadline = Date.now() + query.wait * 1000;
  for (;;) {
    // Waits before reading, so a message committed between the read and the wait still wakes us.
    // No timed re-check per waiter: the bridge publishes every committed event (NOTIFY, backed by
    // its own poll), and the last read at the deadline answers whatever happened.
    const { woken, cancel } = hub.wait(
      inboxWaitKey(actor.name),
      Math.max(0, deadline - Date.now()),
      signal,
    );
    try {
      const messages = await readAfter(db, actor, after, query.limit);
      if (messages.length > 0 || Date.now() >= deadline || signal?.aborted) {
        return { messages, cursor: messages.at(-1)?.id ?? Number(after) };
      }
      await woken;
      // The client is gone: nobody reads a fresh answer, so do not queue a query to build one.
      // An attacker dropping 1,000 long-polls at once would otherwise cost 1,000 reads.
      if (signal?.aborted) return { messages: [], cursor: Number(after) };
    } finally {
      cancel();
    }
  }
}
