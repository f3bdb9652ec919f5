import { createServer } from "node:http";
import next from "next";
import { Server } from "socket.io";
import { CLIENT_IP_HEADER } from "./lib/auth/sign-in-limit";
import { getDb } from "./lib/db";
import { env, requireDatabaseUrl } from "./lib/env";
import {
  attachConsoleNamespace,
  broadcastHubEvents,
  type ConsoleServer,
} from "./lib/realtime/console-namespace";
import { startEventBridge } from "./lib/realtime/event-bridge";
import { getEventHub } from "./lib/realtime/event-hub";
import { startSweeper } from "./lib/requests/sweeper";
import { ensureFirstLead } from "./lib/users/mutations";

// One HTTP server: Next.js (pages and /api/v1 route handlers) and socket.io share the port.
async function main(): Promise<void> {
  const isDev = env.NODE_ENV !== "production";
  const app = next({ dev: isDev, hostname: env.HOST, port: env.PORT });
  await app.prepare();
  const handle = app.getRequestHandler();

  const db = getDb();
  const firstLead = await ensureFirstLead(db, {
    email: env.HANDSHAKE_ADMIN_EMAIL,
    password: env.HANDSHAKE_ADMIN_PASSWORD,
  });
  // The same hub the route handlers' long-polls wait on (decision 003).
  const hub = getEventHub();
  const bridge = await startEventBridge({ databaseUrl: requireDatabaseUrl(), db, hub });
  const sweeper = startSweeper(db);

  const httpServer = createServer((req, res) => {
    // The client's address for sign-in rate limiting comes from the socket, never from the client.
    req.headers[CLIENT_IP_HEADER] = req.socket.remoteAddress ?? "unknown";
    void handle(req, res);
  });
  // Next installs its own upgrade listener (dev HMR); socket.io must leave other upgrades alone.
  const io: ConsoleServer = new Server(httpServer, { destroyUpgrade: false, serveClient: false });
  attachConsoleNamespace(io, db);
  broadcastHubEvents(io, hub);

  await new Promise<void>((resolve) => httpServer.listen(env.PORT, env.HOST, resolve));
  const address = httpServer.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  const url = env.HANDSHAKE_PUBLIC_URL ?? `http://${env.HOST}:${port}`;
  console.log(`Handshake console: ${url}`);
  if (firstLead.isCreated && firstLead.isPasswordGenerated) {
    console.log(`Sign in as ${firstLead.email} with password ${firstLead.password}`);
    console.log("(shown once: this password is not stored anywhere readable; note it now)");
  } else if (firstLead.email) {
    console.log(`Sign in as ${firstLead.email}`);
  }

  let isStopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (isStopping) return;
    isStopping = true;
    console.log(`${signal}: stopping`);
    // A bare close() waits for keep-alive sockets forever; end them so the process can exit.
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
