import type { ServerResponse } from "node:http";

/**
 * How a waiting route hears that its client left: the part of an AbortSignal that the event hub's
 * waits use. A request's own `signal` is one.
 */
export type ClientGone = {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: EventListenerObject, options: { once: true }): void;
  removeEventListener(type: "abort", listener: EventListenerObject): void;
};

// A response's watcher, found from the response its `close` listener is called on.
const watchers = new WeakMap<ServerResponse, ConnectionGone>();

function onResponseClose(this: ServerResponse): void {
  watchers.get(this)?.notify();
}

/**
 * A waiting request's client gone, heard from its `node:http` response closing before its answer.
 * Reading a request's `signal` makes @hono/node-server create an AbortController for it, and an
 * abort listener on its signal costs about 1 KB of heap on Node 20 for the whole wait, a tenth of
 * what a long-poll holds (decision 050); a listener on the response, a function shared by all,
 * costs next to nothing. The response closes when the client leaves, as the adapter's own abort
 * also hears.
 */
class ConnectionGone implements ClientGone {
  // Replaced by `concat`, which sizes its array exactly: pushed to, or spread into, an array holds
  // room for seventeen listeners for the whole wait of one.
  private listeners: readonly EventListenerObject[] = [];

  constructor(private readonly response: ServerResponse) {
    watchers.set(response, this);
    response.on("close", onResponseClose);
  }

  get aborted(): boolean {
    return this.response.closed;
  }

  addEventListener(_type: "abort", listener: EventListenerObject): void {
    if (!this.listeners.includes(listener)) this.listeners = this.listeners.concat(listener);
  }

  removeEventListener(_type: "abort", listener: EventListenerObject): void {
    this.listeners = this.listeners.filter((listening) => listening !== listener);
  }

  notify(): void {
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener.handleEvent(new Event("abort"));
  }
}

/** Whether a response's `close` listener is the one a `clientGoneOf` put there. */
export function isClientGoneListener(listener: unknown): boolean {
  return listener === onResponseClose;
}

/** Hears the given response's client leave. */
export function clientGoneOf(response: ServerResponse): ClientGone {
  return new ConnectionGone(response);
}
