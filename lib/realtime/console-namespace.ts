import type { Server, Socket } from "socket.io";
import { actorFromSession, type HumanActor } from "../auth/actor";
import type { Db } from "../db";
import { listEventsAfter } from "../events/data";
import {
  CONSOLE_NAMESPACE,
  CONSOLE_PROTOCOL_VERSION,
  resumeSchema,
  type ClientToServerEvents,
  type ServerToClientEvents,
} from "./contract";

type SocketData = { actor: HumanActor };
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

async function replayEvents(db: Db, socket: ConsoleSocket, after: number): Promise<void> {
  let cursor = after;
  for (;;) {
    const events = await listEventsAfter(db, cursor);
    for (const event of events) socket.emit("event", event);
    const last = events.at(-1);
    if (!last) break;
    cursor = last.id;
  }
  socket.emit("resumed", { lastId: cursor, version: CONSOLE_PROTOCOL_VERSION });
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
    socket.on("resume", (payload: unknown) => {
      const parsed = resumeSchema.safeParse(payload);
      if (!parsed.success) {
        socket.emit("error", {
          code: "INVALID_INPUT",
          message: "resume expects {after: <event id>}",
        });
        return;
      }
      replayEvents(db, socket, parsed.data.after).catch((error: unknown) => {
        console.error("[console] resume failed", error);
        socket.emit("error", { code: "INTERNAL", message: "could not replay events; reconnect" });
      });
    });
  });
}
