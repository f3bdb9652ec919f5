/** Inboxes whose newest message is remembered; beyond, those quiet the longest are forgotten. */
const MAX_INBOXES = 100_000;
/** Inboxes known quiet at most: beyond, the oldest mark is dropped (dropping one only costs a read). */
const MAX_MARKS = 10_000;

/** Whose inbox a mark is: a read shows one incarnation's messages only. */
export type InboxOwner = { agentId: string; incarnation: number };

type QuietMark = InboxOwner & { messageId: number };

/**
 * What this node knows of an agent's inbox holding nothing beyond a message, so that the agent's
 * next long-poll waits at once instead of reading first (decision 065). The first read of every
 * long-poll is one statement more beside the decision that answers it, on the loop's path.
 *
 * A mark is made when a long-poll is answered with a message this node's own decision wrote (its
 * id taken in that statement, after this node's bridge had started). Every message with a higher
 * id was taken after it, so commits after the bridge started, and its `message.sent` either has
 * reached the hub already — the newest message id seen per inbox, kept here, is then beyond the
 * mark, and the mark does not hold — or reaches it later, and wakes the long-poll that skipped its
 * read, which waits with its wait already in place. The hub trusts a mark only while its bridge
 * holds nothing back (`EventHub.takeQuietInbox`), so "later" is a notification's way from the
 * commit to this node, as for a message committed just after a read. An event the bridge passes as
 * a gap never reaches the hub: its message is read by the long-poll after, as a message committed
 * after a read is today. A mark is therefore taken once.
 */
export class QuietInboxes {
  private readonly newestByKey = new Map<string, number>();
  private readonly marks = new Map<string, QuietMark>();

  /** A `message.sent` this node has seen, from the bridge or its own commit. */
  noteMessage(key: string, messageId: number): void {
    const newest = Math.max(messageId, this.newestByKey.get(key) ?? messageId);
    // What was forgotten could lie beyond its mark: an inbox not remembered is never quiet.
    setAsNewest(this.newestByKey, key, newest, MAX_INBOXES, (forgotten) =>
      this.marks.delete(forgotten),
    );
  }

  /** The owner's inbox under `key` was just answered with `messageId`, which this node wrote. */
  markAnswered(key: string, owner: InboxOwner, messageId: number): void {
    setAsNewest(this.marks, key, { ...owner, messageId }, MAX_MARKS);
  }

  /**
   * Whether the owner's inbox under `key` holds nothing after `after` that this node has not seen
   * announced, by the mark made for it, which this takes. Asked only with the long-poll's wait
   * already in place, so that what is announced from now on wakes it.
   */
  takeQuietAfter(key: string, owner: InboxOwner, after: bigint): boolean {
    const mark = this.marks.get(key);
    if (!mark) return false;
    this.marks.delete(key);
    return (
      mark.agentId === owner.agentId &&
      mark.incarnation === owner.incarnation &&
      after >= BigInt(mark.messageId) &&
      (this.newestByKey.get(key) ?? Infinity) <= mark.messageId
    );
  }
}

/**
 * Sets `key` last in the map's order, then drops the first keys while the map holds more than
 * `max`. The map's iterator is asked only then: it walks past every key deleted since the map was
 * last compacted, and each message noted deletes one.
 */
function setAsNewest<V>(
  map: Map<string, V>,
  key: string,
  value: V,
  max: number,
  onDropped?: (key: string) => void,
): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) {
    const oldest = map.keys().next().value as string;
    map.delete(oldest);
    onDropped?.(oldest);
  }
}
