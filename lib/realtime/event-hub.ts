import type { ClientGone } from "../http/client-gone";
import type { ConsoleEvent } from "../shared/realtime/contract";
import { QuietInboxes, type InboxOwner } from "./quiet-inboxes";

export type EventListener = (event: ConsoleEvent) => void;

type WithoutId<Event> = Event extends unknown ? Omit<Event, "id"> : never;

/**
 * An event as a wait sees it. A wait needs no place in the log, and an event this node has just
 * committed may wake its waits before the bridge publishes it with its id (decision 052).
 */
export type WakingEvent = WithoutId<ConsoleEvent>;

/** Events that end a pending request; each carries its `requestId`. */
const REQUEST_ENDING_KINDS: ReadonlySet<string> = new Set([
  "request.decided",
  "request.expired",
  "request.superseded",
  "request.cancelled",
]);

/** What a long-poll on an agent's inbox waits for: a message to that agent. */
export function inboxWaitKey(agentName: string): string {
  return `inbox:${agentName}`;
}

/** What a long-poll on one request waits for: the event that ends it. */
export function requestEndWaitKey(requestId: string): string {
  return `request:${requestId}`;
}

/** The wait key an event wakes, if any. */
export function waitKeyOf(event: WakingEvent): string | null {
  const data = event.data as { to?: unknown; requestId?: unknown };
  if (event.kind === "message.sent" && typeof data.to === "string") return inboxWaitKey(data.to);
  if (REQUEST_ENDING_KINDS.has(event.kind) && typeof data.requestId === "string") {
    return requestEndWaitKey(data.requestId);
  }
  return null;
}

/**
 * What a wait calls, once: with the event that woke it, or null when it timed out or its client
 * left.
 */
export type Waiter = { wake(event: WakingEvent | null): void };

/**
 * Waits end on a grain of time, and those due in the same grain share one timer: a timer of its
 * own held about 180 bytes per wait for the whole wait (issue 18).
 */
const TIMER_GRAIN_MS = 50;

/** The hub's waits: the first of each key (the others linked from it), and by when they are due. */
type WaitLists = { byKey: Map<string, HubWait>; byDue: Map<number, DueWaits> };

/** The waits due in one grain, and their timer. */
class DueWaits {
  readonly waits = new Set<HubWait>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly byDue: Map<number, DueWaits>,
    private readonly due: number,
  ) {
    this.timer = setTimeout(endDue, Math.max(0, due * TIMER_GRAIN_MS - performance.now()), this);
    byDue.set(due, this);
  }

  remove(wait: HubWait): void {
    this.waits.delete(wait);
    if (this.waits.size > 0) return;
    clearTimeout(this.timer);
    if (this.byDue.get(this.due) === this) this.byDue.delete(this.due);
  }

  end(): void {
    if (this.byDue.get(this.due) === this) this.byDue.delete(this.due);
    for (const wait of [...this.waits]) wait.settle(null);
  }
}

function endDue(due: DueWaits): void {
  due.end();
}

/**
 * One long-poll's wait: its entry in the hub's list for its key and in its due grain, and its
 * client's abort listener (`handleEvent`). The waits of one key are linked through themselves
 * rather than kept in a Set per key, and a wait wakes its waiter by a call rather than a promise:
 * a thousand agents' long-polls hold a thousand of these for their whole wait (issue 18).
 */
class HubWait {
  next: HubWait | undefined;
  previous: HubWait | undefined;
  private readonly due: DueWaits | undefined;
  private isSettled = false;

  constructor(
    private readonly lists: WaitLists,
    readonly key: string,
    timeoutMs: number,
    private readonly clientGone: ClientGone | undefined,
    private readonly waiter: Waiter,
  ) {
    if (clientGone?.aborted) {
      this.isSettled = true;
      waiter.wake(null);
      return;
    }
    // Rounded down: a long-poll is held *up to* its wait, and ends at most a grain early. On the
    // monotonic clock, as timers run: a step of the wall clock would move a shared grain's end.
    const due = Math.floor((performance.now() + Math.max(0, timeoutMs)) / TIMER_GRAIN_MS);
    this.due = lists.byDue.get(due) ?? new DueWaits(lists.byDue, due);
    this.due.waits.add(this);
    clientGone?.addEventListener("abort", this, { once: true });
    const first = lists.byKey.get(key);
    if (first) {
      this.next = first;
      first.previous = this;
    }
    lists.byKey.set(key, this);
  }

  /** Wakes the waiter with the event, or null, once; removes the entry first. */
  settle(event: WakingEvent | null): void {
    if (!this.remove()) return;
    this.waiter.wake(event);
  }

  /** The client left. */
  handleEvent(): void {
    this.settle(null);
  }

  /** Removes the entry without waking the waiter, for a caller that stopped needing it. */
  cancel(): void {
    this.remove();
  }

  private remove(): boolean {
    if (this.isSettled) return false;
    this.isSettled = true;
    const { byKey } = this.lists;
    if (this.previous) this.previous.next = this.next;
    else if (this.next) byKey.set(this.key, this.next);
    else byKey.delete(this.key);
    if (this.next) this.next.previous = this.previous;
    this.next = this.previous = undefined;
    this.due?.remove(this);
    this.clientGone?.removeEventListener("abort", this);
    return true;
  }
}

/** A key's waits, from the first in the hub's map. */
function listFrom(first: HubWait | undefined): HubWait[] {
  const waits: HubWait[] = [];
  for (let wait = first; wait; wait = wait.next) waits.push(wait);
  return waits;
}

/** A wait handed to a long-poll: how to stop it without being woken. */
export type Wait = Pick<HubWait, "cancel">;

/** What feeds the hub (the LISTEN bridge), as far as the hub needs to know it. */
export type HubPublisher = {
  /** Nothing it has been told of or has read is left unpublished: nothing held, no gap waited on. */
  isCaughtUp(): boolean;
};

/**
 * In-process fan-out of committed events, fed by the LISTEN bridge (lib/realtime/event-bridge.ts)
 * and read by socket.io and by long-polls waiting in route handlers. Lives on globalThis because
 * server.ts and Next's route bundle load separate copies of this module (decision 003).
 */
export class EventHub {
  private readonly listeners = new Set<EventListener>();
  private readonly waits: WaitLists = { byKey: new Map(), byDue: new Map() };
  private newestId = 0;
  /** Fed with every message this hub wakes for, before the waits it wakes (decision 065). */
  private readonly quietInboxes = new QuietInboxes();
  private publisher: HubPublisher | undefined;

  get lastId(): number {
    return this.newestId;
  }

  /** How many long-polls wait on this node. */
  get waiterCount(): number {
    let count = 0;
    for (const first of this.waits.byKey.values()) count += listFrom(first).length;
    return count;
  }

  publish(events: readonly ConsoleEvent[]): void {
    for (const event of events) {
      if (event.id <= this.newestId) continue;
      this.newestId = event.id;
      this.wakeWaitsFor(event);
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (error) {
          console.error("[events] listener failed", error);
        }
      }
    }
  }

  /**
   * Wakes the waits for an event this node has just committed, without waiting for the bridge to
   * publish it a NOTIFY later (decision 052). Listeners (consoles) get it from the bridge only, in
   * the log's order; a wait that the bridge's copy wakes again reads and finds nothing new.
   */
  wakeWaitsFor(event: WakingEvent): void {
    const key = waitKeyOf(event);
    if (key !== null && event.kind === "message.sent") {
      this.quietInboxes.noteMessage(key, event.data.messageId);
    }
    // Listed first: a woken waiter may wait again at once, and each settles and unlinks itself.
    const woken = listFrom(key === null ? undefined : this.waits.byKey.get(key));
    for (const wait of woken) wait.settle(event);
  }

  /** The bridge feeding this hub; returns how to detach it. */
  attachPublisher(publisher: HubPublisher): () => void {
    this.publisher = publisher;
    return () => {
      if (this.publisher === publisher) this.publisher = undefined;
    };
  }

  /** The owner's inbox under `key` was just answered with `messageId`, which this node wrote. */
  markInboxAnswered(key: string, owner: InboxOwner, messageId: number): void {
    this.quietInboxes.markAnswered(key, owner, messageId);
  }

  /**
   * Whether the owner's inbox under `key` holds nothing after `after` that its long-poll, waiting
   * already, would not be woken by (decision 065). Only while the bridge is caught up: a message
   * whose event it holds, or has not read yet, has committed without being noted.
   */
  takeQuietInbox(key: string, owner: InboxOwner, after: bigint): boolean {
    return (
      this.publisher?.isCaughtUp() === true && this.quietInboxes.takeQuietAfter(key, owner, after)
    );
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Waits for the next published event with this wait key (`waitKeyOf`): wakes the waiter with
   * it, or with null after `timeoutMs` or when the client leaves (at once if it already has). The
   * waits are kept by what they wait for, so publishing costs one lookup per event, not a call per
   * open long-poll. Callers re-read the database afterwards: an event is a hint, not the data.
   */
  wait(key: string, timeoutMs: number, clientGone: ClientGone | undefined, waiter: Waiter): Wait {
    return new HubWait(this.waits, key, timeoutMs, clientGone, waiter);
  }
}

const holder = globalThis as typeof globalThis & { handshakeEventHub?: EventHub };

export function getEventHub(): EventHub {
  holder.handshakeEventHub ??= new EventHub();
  return holder.handshakeEventHub;
}
