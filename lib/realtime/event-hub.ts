import type { ConsoleEvent } from "../shared/realtime/contract";

export type EventListener = (event: ConsoleEvent) => void;

/**
 * In-process fan-out of committed events, fed by the LISTEN bridge (lib/realtime/event-bridge.ts)
 * and read by socket.io and by long-polls waiting in route handlers. Lives on globalThis because
 * server.ts and Next's route bundle load separate copies of this module (decision 003).
 */
export class EventHub {
  private readonly listeners = new Set<EventListener>();
  private newestId = 0;

  get lastId(): number {
    return this.newestId;
  }

  publish(events: readonly ConsoleEvent[]): void {
    for (const event of events) {
      if (event.id <= this.newestId) continue;
      this.newestId = event.id;
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
   * Resolves with the first published event that matches, or null after `timeoutMs` or when the
   * signal aborts. Callers re-check the database afterwards: an event is a hint, not the data.
   */
  waitFor(
    matches: (event: ConsoleEvent) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<ConsoleEvent | null> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(null);
      const finish = (event: ConsoleEvent | null) => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener("abort", onAbort);
        resolve(event);
      };
      const onAbort = () => finish(null);
      const timer = setTimeout(() => finish(null), timeoutMs);
      const unsubscribe = this.subscribe((event) => {
        if (matches(event)) finish(event);
      });
      signal?.addEventListener("abort", onAbort);
    });
  }
}

const holder = globalThis as typeof globalThis & { handshakeEventHub?: EventHub };

export function getEventHub(): EventHub {
  holder.handshakeEventHub ??= new EventHub();
  return holder.handshakeEventHub;
}
