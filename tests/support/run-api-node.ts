import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { CLIENT_IP_HEADER } from "../../lib/auth/sign-in-limit";
import { getDb } from "../../lib/db";
import { env, requireDatabaseUrl } from "../../lib/env";
import {
  attachConsoleNamespace,
  broadcastHubEvents,
  type ConsoleServer,
} from "../../lib/realtime/console-namespace";
import { startEventBridge } from "../../lib/realtime/event-bridge";
import { getEventHub } from "../../lib/realtime/event-hub";
import { startSweeper } from "../../lib/requests/sweeper";
import { READY_PREFIX } from "./api-node";
import { startApiServer } from "./api-server";

/**
 * One web node as server.ts builds it, minus Next: the production /api/v1 route handlers (served by
 * tests/support/api-server.ts), socket.io /console on the same HTTP server, the LISTEN/NOTIFY event
 * bridge feeding the shared hub, and the sweeper, all with server.ts's default settings.
 *
 *   DATABASE_URL=… PORT=… HANDSHAKE_SECRET=… node --import tsx tests/support/run-api-node.ts
 *
 * Prints `Handshake API node: <url>` once it accepts connections (tests/support/api-node.ts waits
 * for that line). SIGTERM/SIGINT stop it cleanly; the reliability tests also kill -9 it.
 */
async function main(): Promise<void> {
  const db = getDb();
  const hub = getEventHub();
  const bridge = await startEventBridge({ databaseUrl: requireDatabaseUrl(), db, hub });
  const sweeper = startSweeper(db);

  const api = await startApiServer();
  const httpServer = api.server;
  // startApiServer listens on a free port; a node needs its configured one, so the same agents
  // find it again after a restart. Nothing has connected yet, so closing is immediate.
  await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  // As in server.ts: the client's address for sign-in rate limiting comes from the socket.
  httpServer.prependListener("request", (req) => {
    req.headers[CLIENT_IP_HEADER] = req.socket.remoteAddress ?? "unknown";
  });
  const io: ConsoleServer = new Server(httpServer, { serveClient: false });
  attachConsoleNamespace(io, db);
  broadcastHubEvents(io, hub);

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(env.PORT, env.HOST, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  console.log(`${READY_PREFIX}http://${env.HOST}:${port}`);

  let isStopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (isStopping) return;
    isStopping = true;
    console.log(`${signal}: stopping`);
    sweeper.stop();
    void io.close();
    httpServer.closeAllConnections();
    httpServer.close(() => {
      void bridge
        .stop()
        .then(() => db.$disconnect())
        .finally(() => process.exit(0));
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
