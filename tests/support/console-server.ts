import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import {
  attachConsoleNamespace,
  watchConsoleSessions,
  type ConsoleServer,
} from "../../lib/realtime/console-namespace";
import { startEventBridge } from "../../lib/realtime/event-bridge";
import { EventHub } from "../../lib/realtime/event-hub";

export type ConsoleServerOptions = {
  maxReplayEvents?: number;
  /** Re-check sessions as a web node does: on events from a LISTEN bridge, and every intervalMs. */
  watchSessions?: { intervalMs: number };
};

/** A socket.io server with the production /console namespace, on a free loopback port. */
export async function startConsoleServer(options: ConsoleServerOptions = {}): Promise<{
  io: ConsoleServer;
  baseUrl: string;
  stop: () => Promise<void>;
}> {
  const httpServer = createServer();
  const io: ConsoleServer = new Server(httpServer);
  const db = getDb();
  attachConsoleNamespace(io, db, { maxReplayEvents: options.maxReplayEvents });
  let stopServices = async () => undefined as void;
  if (options.watchSessions) {
    const hub = new EventHub();
    const bridge = await startEventBridge({ databaseUrl: requireDatabaseUrl(), db, hub });
    const stopWatching = watchConsoleSessions(io, db, hub, options.watchSessions.intervalMs);
    stopServices = async () => {
      stopWatching();
      await bridge.stop();
    };
  }
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  return {
    io,
    baseUrl: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    stop: async () => {
      await stopServices();
      await io.close();
    },
  };
}
