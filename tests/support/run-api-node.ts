import type { AddressInfo } from "node:net";
import { getDb } from "../../lib/db";
import { env, requireDatabaseUrl } from "../../lib/env";
import { startWebNodeServices } from "../../lib/realtime/web-node";
import { READY_PREFIX } from "./api-node";
import { startApiServer } from "./api-server";

/**
 * One web node as server.ts builds it, minus Next: the API's router (tests/support/api-server.ts),
 * socket.io /console on the same HTTP server, the LISTEN/NOTIFY event bridge feeding the shared
 * hub, and the sweeper, all with server.ts's default settings.
 *
 *   DATABASE_URL=… PORT=… HANDSHAKE_SECRET=… node --import tsx tests/support/run-api-node.ts
 *
 * Prints `Handshake API node: <url>` once it accepts connections (tests/support/api-node.ts waits
 * for that line). SIGTERM/SIGINT stop it cleanly; the reliability tests also kill -9 it.
 */
async function main(): Promise<void> {
  const db = getDb();
  const api = await startApiServer();
  const httpServer = api.server;
  // startApiServer listens on a free port; a node needs its configured one, so the same agents
  // find it again after a restart. Nothing has connected yet, so closing is immediate.
  await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  const services = await startWebNodeServices(httpServer, db, requireDatabaseUrl());
  // Before the ready line: a test may signal the node the moment it reads it, and a signal that
  // finds no handler ends the node without its stop.
  process.on("SIGINT", services.stop);
  process.on("SIGTERM", services.stop);

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(env.PORT, env.HOST, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  console.log(`${READY_PREFIX}http://${env.HOST}:${port}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
