import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { getDb } from "../../lib/db";
import { attachConsoleNamespace, type ConsoleServer } from "../../lib/realtime/console-namespace";

/** A socket.io server with the production /console namespace, on a free loopback port. */
export async function startConsoleServer(): Promise<{ io: ConsoleServer; baseUrl: string }> {
  const httpServer = createServer();
  const io: ConsoleServer = new Server(httpServer);
  attachConsoleNamespace(io, getDb());
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  return { io, baseUrl: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}` };
}
