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

type Waiter = {
  key: string;
  resolve: (event: ConsoleEvent | null) => void;
  timer: NodeJS.Timeout;
  signal: AbortSignal | undefined;
  onAbort: () => void;
};

/**
 * In-process fan-out of committed events, fed by the LISTEN bridge (lib/realtime/event-bridge.ts)
 * and read by socket.io and by long-polls waiting in route handlers. Lives on globalThis because
 * server.ts and Next's route bundle load separate copies of this module (decision 003).
 */
export class EventHub {
  private readonly listeners = new Set<EventListener>();
  private readonly waiters = new Map<string, Set<Waiter>>();
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
      if (waiters) for (const waiter of waiters) this.release(waiter, event);
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
   * null after `timeoutMs` or when the signal aborts. A waiter is one entry in a map keyed by what
   * it waits for, so publishing costs one lookup per event, not a call per open long-poll. Callers
   * re-read the database afterwards: an event is a hint, not the data. `cancel` resolves with null
   * and removes the entry, for a caller that stopped needing it.
   */
  wait(
    key: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): { woken: Promise<ConsoleEvent | null>; cancel: () => void } {
    let waiter: Waiter | undefined;
    const woken = new Promise<ConsoleEvent | null>((resolve) => {
      if (signal?.aborted) return resolve(null);
      const entry: Waiter = {
        key,
        resolve,
        signal,
        timer: setTimeout(() => this.release(entry, null), timeoutMs),
        onAbort: () => this.release(entry, null),
      };
      signal?.addEventListener("abort", entry.onAbort, { once: true });
      let waiters = this.waiters.get(key);
      if (!waiters) this.waiters.set(key, (waiters = new Set()));
      waiters.add(entry);
      waiter = entry;
    });
    return { woken, cancel: () => waiter && this.release(waiter, null) };
  }

  private release(waiter: Waiter, event: ConsoleEvent | null): void {
    const waiters = this.waiters.get(waiter.key);
    if (!waiters?.delete(waiter)) return;
    if (waiters.size === 0) this.waiters.delete(waiter.key);
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.resolve(event);
  }
}

const holder = globalThis as typeof globalThis & { handshakeEventHub?: EventHub };

export function getEventHub(): EventHub {
  holder.handshakeEventHub ??= new EventHub();
  return holder.handshakeEventHub;
}
