import type { ClientGone } from "../http/client-gone";
import type { ConsoleEvent } from "../shared/realtime/contract";

export type EventListener = (event: ConsoleEvent) => void;

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
export function waitKeyOf(event: ConsoleEvent): string | null {
  const data = event.data as { to?: unknown; requestId?: unknown };
  if (event.kind === "message.sent" && typeof data.to === "string") return inboxWaitKey(data.to);
  if (REQUEST_ENDING_KINDS.has(event.kind) && typeof data.requestId === "string") {
    return requestEndWaitKey(data.requestId);
  }
  return null;
}

/**
 * One long-poll's wait: its entry in the hub's map and its request's abort listener
 * (`handleEvent`). A class, with its timer calling a function shared by all, so that a waiting
 * request holds no closure of its own: each would also carry the `name` property tsx's esbuild
 * gives a named function, 256 bytes (decision 041).
 */
class HubWait {
  readonly woken: Promise<ConsoleEvent | null>;
  private resolve!: (event: ConsoleEvent | null) => void;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly waiters: Map<string, Set<HubWait>>,
    readonly key: string,
    timeoutMs: number,
    private readonly clientGone: ClientGone | undefined,
  ) {
    this.woken = new Promise((resolve) => (this.resolve = resolve));
    if (clientGone?.aborted) {
      this.resolve(null);
      return;
    }
    this.timer = setTimeout(endUnwoken, timeoutMs, this);
    clientGone?.addEventListener("abort", this, { once: true });
    let keyed = waiters.get(key);
    if (!keyed) waiters.set(key, (keyed = new Set()));
    keyed.add(this);
  }

  /** Resolves with the event, or null, once: the first call removes the entry. */
  settle(event: ConsoleEvent | null): void {
    const keyed = this.waiters.get(this.key);
    if (!keyed?.delete(this)) return;
    if (keyed.size === 0) this.waiters.delete(this.key);
    clearTimeout(this.timer);
    this.clientGone?.removeEventListener("abort", this);
    this.resolve(event);
  }

  /** The client left. */
  handleEvent(): void {
    this.settle(null);
  }

  /** Resolves with null and removes the entry, for a caller that stopped needing it. */
  cancel(): void {
    this.settle(null);
  }
}

function endUnwoken(wait: HubWait): void {
  wait.settle(null);
}

/** A wait handed to a long-poll: what wakes it, and how to stop it. */
export type Wait = Pick<HubWait, "woken" | "cancel">;

/**
 * In-process fan-out of committed events, fed by the LISTEN bridge (lib/realtime/event-bridge.ts)
 * and read by socket.io and by long-polls waiting in route handlers. Lives on globalThis because
 * server.ts and Next's route bundle load separate copies of this module (decision 003).
 */
export class EventHub {
  private readonly listeners = new Set<EventListener>();
  private readonly waiters = new Map<string, Set<HubWait>>();
  private newestId = 0;

  get lastId(): number {
    return this.newestId;
  }

  /** How many long-polls wait on this node. */
  get waiterCount(): number {
    let count = 0;
    for (const waiters of this.waiters.values()) count += waiters.size;
    return count;
  }

  publish(events: readonly ConsoleEvent[]): void {
    for (const event of events) {
      if (event.id <= this.newestId) continue;
      this.newestId = event.id;
      const key = waitKeyOf(event);
      const waiters = key === null ? undefined : this.waiters.get(key);
      if (waiters) for (const waiter of waiters) waiter.settle(event);
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (error) {
          console.error("[events] listener failed", error);
        }
      }
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Waits for the next published event with this wait key (`waitKeyOf`): resolves with it, or with
   * null after `timeoutMs` or when the client leaves. A waiter is one entry in a map keyed by what
   * it waits for, so publishing costs one lookup per event, not a call per open long-poll. Callers
   * re-read the database afterwards: an event is a hint, not the data. `cancel` resolves with null
   * and removes the entry, for a caller that stopped needing it.
   */
  wait(key: string, timeoutMs: number, clientGone?: ClientGone): Wait {
    return new HubWait(this.waiters, key, timeoutMs, clientGone);
  }
}

const holder = globalThis as typeof globalThis & { handshakeEventHub?: EventHub };

export function getEventHub(): EventHub {
  holder.handshakeEventHub ??= new EventHub();
  return holder.handshakeEventHub;
}
