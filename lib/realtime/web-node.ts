import type { IncomingMessage, Server as HttpServer } from "node:http";
import { Server } from "socket.io";
import { getActorCache } from "../auth/actor-cache";
import { startActorEvictionListener } from "../auth/actor-evictions";
import { getRuleCache } from "../rules/rule-cache";
import { CLIENT_IP_HEADER } from "../auth/sign-in-limit";
import { startDatabaseClock } from "../database-clock";
import { CONSOLE_NAMESPACE } from "../shared/realtime/contract";
import type { PrismaClient } from "../generated/prisma/client";
import { startSweeper } from "../requests/sweeper";
import {
  attachConsoleNamespace,
  broadcastHubEvents,
  CONSOLE_SERVER_OPTIONS,
  watchConsoleSessions,
  type ConsoleServer,
} from "./console-namespace";
import { coalesceFlushedFrames } from "./coalesced-flush";
import { startEventBridge } from "./event-bridge";
import { getEventHub } from "./event-hub";
import { createPresence, startPresenceTransport, type Presence } from "./presence";

/**
 * The client's address for sign-in rate limiting comes from the socket, never from the client. The
 * API's router builds its headers from `rawHeaders`, so the stamp replaces any copy sent there too.
 */
export function stampClientAddress(request: IncomingMessage): void {
  const address = request.socket.remoteAddress ?? "unknown";
  request.headers[CLIENT_IP_HEADER] = address;
  const raw = request.rawHeaders;
  for (let index = raw.length - 2; index >= 0; index -= 2) {
    if (raw[index]?.toLowerCase() === CLIENT_IP_HEADER) raw.splice(index, 2);
  }
  // `concat` sizes its array exactly: pushed to (or spread into), an array keeps room for sixteen
  // more headers for as long as the request is open, a long-poll's whole wait (issue 18).
  request.rawHeaders = raw.concat(CLIENT_IP_HEADER, address);
}

/** How long a stop may wait for the node's work and connections to end before it exits anyway. */
const STOP_GRACE_MS = 10_000;

/**
 * What every web node runs beside its HTTP handler: the LISTEN bridge feeding the hub that
 * long-polls wait on (decision 003), the listener that keeps the actor cache honest (decision 027),
 * the database's clock (decision 083), the sweeper, and socket.io /console on the same HTTP server.
 * Returns the graceful stop for SIGINT/SIGTERM.
 */
export async function startWebNodeServices(
  httpServer: HttpServer,
  db: PrismaClient,
  databaseUrl: string,
): Promise<{ stop: (signal: NodeJS.Signals) => void }> {
  // Before anything stamps or judges a time: the node's own clock may be minutes off.
  const clock = await startDatabaseClock(db);
  const hub = getEventHub();
  const bridge = await startEventBridge({ databaseUrl, db, hub });
  const evictions = await startActorEvictionListener({
    databaseUrl,
    cache: getActorCache(),
    alsoCaches: [getRuleCache()],
  });
  const sweeper = startSweeper(db);
  // Next installs its own upgrade listener (dev HMR); socket.io must leave other upgrades alone.
  const io: ConsoleServer = new Server(httpServer, {
    ...CONSOLE_SERVER_OPTIONS,
    destroyUpgrade: false,
  });
  coalesceFlushedFrames(io.engine);
  const presence = await startPresence(io, databaseUrl);
  attachConsoleNamespace(io, db, { presence });
  broadcastHubEvents(io, hub, db);
  const stopWatchingSessions = watchConsoleSessions(io, db, hub);

  let isStopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (isStopping) return;
    isStopping = true;
    console.log(`${signal}: stopping`);
    // The pool ends once its connections are back, and a statement waiting on a lock that another
    // session holds does not come back until that session lets go: the node would never exit, nor
    // `npm start` on Ctrl-C. Past the grace period it exits as a crash would (docs/RELIABILITY.md);
    // the clients it no longer answers were cut off when the stop began.
    setTimeout(() => {
      console.error(
        `${signal}: not stopped after ${STOP_GRACE_MS / 1000} s (a database call still waiting?); exiting`,
      );
      process.exit(1);
    }, STOP_GRACE_MS).unref();
    sweeper.stop();
    clock.stop();
    stopWatchingSessions();
    void presence.stop();
    void io.close();
    // A bare close() waits for keep-alive sockets forever; end them so the process can exit.
    httpServer.closeAllConnections();
    httpServer.close(() => {
      void Promise.all([bridge.stop(), evictions.stop()])
        .then(() => db.$disconnect())
        .finally(() => process.exit(0));
    });
  };
  return { stop };
}

/** Presence shared with the other nodes through NOTIFY; every change goes to this node's consoles. */
export async function startPresence(io: ConsoleServer, databaseUrl: string): Promise<Presence> {
  // The transport delivers to presence, which publishes through the transport: late-bound.
  const delivery: { presence?: Presence } = {};
  const transport = await startPresenceTransport(databaseUrl, (payload) =>
    delivery.presence?.receive(payload),
  );
  delivery.presence = createPresence({
    transport,
    onChange: (payload) => io.of(CONSOLE_NAMESPACE).emit("presence", payload),
  });
  return delivery.presence;
}
