import type { Server, Socket } from "socket.io";
import { actorFromSession, type HumanActor } from "../auth/actor";
import type { Db } from "../db";
import { listEventsAfter } from "../events/data";
import {
  CONSOLE_NAMESPACE,
  CONSOLE_PROTOCOL_VERSION,
  resumeSchema,
  type ClientToServerEvents,
  type ConsoleEvent,
  type ServerToClientEvents,
} from "./contract";
import type { EventHub } from "./event-hub";

type SocketData = { actor: HumanActor; feed: ConsoleFeed };
export type ConsoleServer = Server<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  SocketData
>;
type ConsoleSocket = Socket<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  SocketData
>;

function headersOf(socket: ConsoleSocket): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(socket.handshake.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return headers;
}

/** Returns the id the replay ended at. */
async function replayEvents(db: Db, socket: ConsoleSocket, after: number): Promise<number> {
  let cursor = after;
  for (;;) {
    const events = await listEventsAfter(db, cursor);
    for (const event of events) socket.emit("event", event);
    const last = events.at(-1);
    if (!last) break;
    cursor = last.id;
  }
  socket.emit("resumed", { lastId: cursor, version: CONSOLE_PROTOCOL_VERSION });
  return cursor;
}

type ConsoleFeed = {
  deliverLive(event: ConsoleEvent): void;
  resume(after: number): void;
};

/**
 * What one socket is sent. Live events flow from the moment it connects, so a console that has not
 * resumed yet (or never does) still sees new activity; a later resume replays everything after
 * `after`, including events already sent live, so clients key events by id.
 *
 * While a replay runs, live events are held, then released after `resumed` minus the ids the
 * replay already covered. The replay's last read and the hub overlap in time, so nothing falls
 * between them and nothing arrives twice. Resumes on one socket run one after another.
 *
 * Like the bridge (see GAP_WAIT_MS there), a replay reads committed rows only: an event whose
 * lower id commits after the replay read a higher one is dropped here as already covered.
 */
function createFeed(db: Db, socket: ConsoleSocket): ConsoleFeed {
  let lastSentId = 0;
  let held: ConsoleEvent[] | undefined;
  let replays = Promise.resolve();

  function sendLive(event: ConsoleEvent): void {
    if (event.id <= lastSentId) return;
    lastSentId = event.id;
    socket.emit("event", event);
  }

  async function replay(after: number): Promise<void> {
    const buffer: ConsoleEvent[] = [];
    held = buffer;
    try {
      lastSentId = Math.max(lastSentId, await replayEvents(db, socket, after));
    } catch (error) {
      console.error("[console] resume failed", error);
      socket.emit("error", { code: "INTERNAL", message: "could not replay events; reconnect" });
    } finally {
      held = undefined;
      for (const event of buffer) sendLive(event);
    }
  }

  return {
    deliverLive(event) {
      if (held) held.push(event);
      else sendLive(event);
    },
    resume(after) {
      replays = replays.then(() => replay(after));
    },
  };
}

/** Only signed-in humans join /console; the session cookie rides on the handshake. */
export function attachConsoleNamespace(io: ConsoleServer, db: Db): void {
  const namespace = io.of(CONSOLE_NAMESPACE);
  namespace.use((socket, next) => {
    actorFromSession(headersOf(socket))
      .then((actor) => {
        if (!actor) return next(new Error("UNAUTHENTICATED"));
        socket.data.actor = actor;
        next();
      })
      .catch(() => next(new Error("UNAUTHENTICATED")));
  });
  namespace.on("connection", (socket) => {
    // Same tick as joining namespace.sockets: broadcastHubEvents never meets a socket without one.
    socket.data.feed = createFeed(db, socket);
    socket.on("resume", (payload: unknown) => {
      const parsed = resumeSchema.safeParse(payload);
      if (!parsed.success) {
        socket.emit("error", {
          code: "INVALID_INPUT",
          message: "resume expects {after: <event id>}",
        });
        return;
      }
      socket.data.feed.resume(parsed.data.after);
    });
  });
}

/**
 * Sends every event the hub publishes to every /console socket (through its feed, see createFeed).
 * Call after attachConsoleNamespace; returns the unsubscribe.
 */
export function broadcastHubEvents(io: ConsoleServer, hub: EventHub): () => void {
  const namespace = io.of(CONSOLE_NAMESPACE);
  return hub.subscribe((event) => {
    for (const socket of namespace.sockets.values()) socket.data.feed.deliverLive(event);
  });
}
