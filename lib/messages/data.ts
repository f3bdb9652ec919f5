import { holdLongPoll } from "../agents/limits";
import type { AgentActor } from "../auth/actor";
import type { Db } from "../db";
import type { EventHub } from "../realtime/event-hub";
import type { InboxQuery } from "./schema";
import { toMessageView, type MessageView } from "./views";

export type Inbox = { messages: MessageView[]; cursor: number };

/**
 * NOTIFY wakes waiters at once, and while the listener is down the bridge's own 2 s poll still
 * publishes to the hub; this re-check is the last resort. Every waiting long-poll pays one query
 * per period: at 2 s, 1,000 idle agents cost ~500 queries/s (docs/PERFORMANCE.md, G3.4).
 */
const BACKSTOP_RECHECK_MS = 10_000;

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
    // Subscribe before reading, so a message committed between the read and the wait still wakes us.
    const stopWaiting = new AbortController();
    const onAbort = () => stopWaiting.abort();
    signal?.addEventListener("abort", onAbort);
    const woken = hub.waitFor(
      (event) => event.kind === "message.sent" && event.data.to === actor.name,
      Math.max(0, Math.min(deadline - Date.now(), BACKSTOP_RECHECK_MS)),
      stopWaiting.signal,
    );
    try {
      const messages = await readAfter(db, actor, after, query.limit);
      if (messages.length > 0 || Date.now() >= deadline || signal?.aborted) {
        return { messages, cursor: messages.at(-1)?.id ?? Number(after) };
      }
      await woken;
    } finally {
      stopWaiting.abort();
      signal?.removeEventListener("abort", onAbort);
    }
  }
}
