import { takeLongPollSlot, type LongPollSlot } from "../agents/limits";
import type { ClientGone } from "../http/client-gone";
import type { AgentActor } from "../auth/actor";
import { queryHot, type Db } from "../db";
import type { Message } from "../generated/prisma/client";
import { inboxWaitKey, type EventHub, type WakingEvent } from "../realtime/event-hub";
import { longPollDeadline, LongPollAnswer, type LongPollSource } from "../realtime/long-poll";
import { messageWokenBy } from "./decision-messages";
import type { InboxQuery } from "./schema";
import { toMessageView, type MessageView } from "./views";

export type Inbox = { messages: MessageView[]; cursor: number };

/**
 * Every empty answer's list: a waiting long-poll keeps its last read's answer for its whole wait,
 * and a thousand waiting agents each holding an empty array of their own add up (issue 18).
 * Frozen, so that a push throws rather than fill every empty answer; answers are only written.
 */
const NO_MESSAGES = Object.freeze([]) as unknown as MessageView[];

/**
 * The hub key of an agent's inbox, made once per cached actor rather than once per long-poll,
 * which would hold a string of its own for its whole wait (issue 18).
 */
const inboxKeys = new WeakMap<AgentActor, string>();
function inboxKeyOf(actor: AgentActor): string {
  let key = inboxKeys.get(actor);
  if (key === undefined) inboxKeys.set(actor, (key = inboxWaitKey(actor.name)));
  return key;
}

// Only this incarnation's messages: an ended one's never reach a new one (docs/decisions/011).
// Every long-poll of every agent starts with this read: a hot statement (lib/db.ts, queryHot).
const INBOX_READ_SQL = `
  SELECT id, sender, recipient, agent_id AS "agentId", incarnation, type, content, metadata,
         cancelled_at AS "cancelledAt", created_at AS "createdAt"
  FROM messages
  WHERE agent_id = $1::uuid AND incarnation = $2 AND cancelled_at IS NULL AND id > $3::bigint
  ORDER BY id
  LIMIT $4`;

async function readAfter(
  db: Db,
  actor: AgentActor,
  after: bigint,
  limit: number,
): Promise<MessageView[]> {
  const rows = await queryHot<Omit<Message, "id"> & { id: string | bigint }>(
    db,
    "inbox-read",
    INBOX_READ_SQL,
    [actor.agentId, actor.incarnation, after.toString(), limit],
  );
  // `pg` reads a bigint as its text; Prisma, when the pool is not ours, as a BigInt.
  return rows.map((row) => toMessageView({ ...row, id: BigInt(row.id) }));
}

/**
 * An inbox long-poll's reads: done at the first message. The cursor it reads after, when the
 * query names none, is what the agent acknowledged, read once by the first read. The first read
 * of a long-poll that waits is not sent when this node knows the inbox holds nothing its wait,
 * already in place, would not be woken by (lib/realtime/quiet-inboxes.ts).
 */
class InboxRead implements LongPollSource<Inbox> {
  constructor(
    private readonly db: Db,
    private readonly hub: EventHub,
    private readonly actor: AgentActor,
    private after: bigint | undefined,
    private readonly limit: number,
    private mayTrustQuiet: boolean,
  ) {}

  async read(): Promise<Inbox> {
    const { after: asked, actor } = this;
    const mayTrustQuiet = this.mayTrustQuiet;
    this.mayTrustQuiet = false;
    if (mayTrustQuiet && asked !== undefined && this.hub.takeQuietInbox(this.key, actor, asked)) {
      return { messages: NO_MESSAGES, cursor: Number(asked) };
    }
    const after = (this.after ??= await ackedCursor(this.db, actor.agentId));
    const messages = await readAfter(this.db, actor, after, this.limit);
    if (messages.length === 0) return { messages: NO_MESSAGES, cursor: Number(after) };
    return { messages, cursor: messages.at(-1)?.id ?? Number(after) };
  }

  isDone(inbox: Inbox): boolean {
    return inbox.messages.length > 0;
  }

  async answerWoken(event: WakingEvent): Promise<Inbox | undefined> {
    if (this.after === undefined) return undefined;
    const message = await messageWokenBy(event, this.actor, this.after);
    if (!message) return undefined;
    this.hub.markInboxAnswered(this.key, this.actor, message.id);
    return { messages: [message], cursor: message.id };
  }

  hold(): LongPollSlot {
    return takeLongPollSlot(this.actor.agentId);
  }

  get key(): string {
    return inboxKeyOf(this.actor);
  }
}

/**
 * An agent's messages after a cursor (default: what it has acknowledged). Reading deletes nothing,
 * so a crash between read and processing loses nothing. With `wait`, an empty inbox is held open
 * until a message arrives or the wait ends, in one of the agent's long-poll slots.
 */
export function readInbox(
  db: Db,
  hub: EventHub,
  actor: AgentActor,
  query: InboxQuery,
  clientGone?: ClientGone,
): LongPollAnswer<Inbox> {
  return new LongPollAnswer({
    hub,
    key: inboxKeyOf(actor),
    deadline: longPollDeadline(Date.now(), query.wait),
    clientGone,
    source: new InboxRead(
      db,
      hub,
      actor,
      query.after === undefined ? undefined : BigInt(query.after),
      query.limit,
      query.wait > 0,
    ),
  });
}

async function ackedCursor(db: Db, agentId: string): Promise<bigint> {
  const agent = await db.agent.findUniqueOrThrow({
    where: { id: agentId },
    select: { inboxAckedId: true },
  });
  return agent.inboxAckedId;
}
