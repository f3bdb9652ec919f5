import next from "next";
import { createApi } from "./lib/api/v1/routes";
import { getDb } from "./lib/db";
import { env, requireDatabaseUrl } from "./lib/env";
import { localServerUrl } from "./lib/http/local-url";
import { createHttpServer, createNodeListener } from "./lib/http/node-listener";
import { isApiTarget } from "./lib/http/router";
import { stampClientAddress, startWebNodeServices } from "./lib/realtime/web-node";
import { ensureFirstLead } from "./lib/users/mutations";

// One HTTP server: the API's router (/api/v1), Next.js (pages) and socket.io share the port.
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
  const handleApi = createNodeListener(createApi());
  const httpServer = createHttpServer((req, res) => {
    stampClientAddress(req);
    void (isApiTarget(req.url ?? "/") ? handleApi(req, res) : handle(req, res));
  });
  const services = await startWebNodeServices(httpServer, db, requireDatabaseUrl());
  // Before the node announces itself: a signal that finds no handler ends it without its stop.
  process.on("SIGINT", services.stop);
  process.on("SIGTERM", services.stop);

  await new Promise<void>((resolve) => httpServer.listen(env.PORT, env.HOST, resolve));
  const address = httpServer.address();
  const port = typeof address === "object" && address ? address.port : env.PORT;
  const url = env.HANDSHAKE_PUBLIC_URL ?? localServerUrl(env.HOST, port);
  console.log(`Handshake console: ${url}`);
  if (firstLead.isCreated && firstLead.isPasswordGenerated) {
    console.log(`Sign in as ${firstLead.email} with password ${firstLead.password}`);
    console.log("(shown once: this password is not stored anywhere readable; note it now)");
  } else if (firstLead.email) {
    console.log(`Sign in as ${firstLead.email}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
