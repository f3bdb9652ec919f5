import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import {
  attachConsoleNamespace,
  CONSOLE_SERVER_OPTIONS,
  watchConsoleSessions,
  type ConsoleServer,
} from "../../lib/realtime/console-namespace";
import { startEventBridge } from "../../lib/realtime/event-bridge";
import { EventHub } from "../../lib/realtime/event-hub";
import { startPresence } from "../../lib/realtime/web-node";

export type ConsoleServerOptions = {
  maxReplayEvents?: number;
  /** Re-check sessions as a web node does: on events from a LISTEN bridge, and every intervalMs. */
  watchSessions?: { intervalMs: number };
  /** Presence as a web node runs it: shared with other nodes through NOTIFY. */
  withPresence?: boolean;
  /** In place of the web node's 10 s, for a test that waits for a connection to be dropped. */
  connectTimeoutMs?: number;
};

/** A socket.io server with the production /console namespace, on a free loopback port. */
export async function startConsoleServer(options: ConsoleServerOptions = {}): Promise<{
  io: ConsoleServer;
  baseUrl: string;
  stop: () => Promise<void>;
}> {
  const httpServer = createServer();
  const io: ConsoleServer = new Server(httpServer, {
    ...CONSOLE_SERVER_OPTIONS,
    ...(options.connectTimeoutMs !== undefined && { connectTimeout: options.connectTimeoutMs }),
  });
  const db = getDb();
  const presence = options.withPresence ? await startPresence(io, requireDatabaseUrl()) : undefined;
  attachConsoleNamespace(io, db, { maxReplayEvents: options.maxReplayEvents, presence });
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
      await presence?.stop();
      await io.close();
    },
  };
}
