import { readdirSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

type Handler = (
  request: Request,
  context: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response> | Response;
type RouteModule = Partial<Record<string, Handler>>;
type Route = {
  pattern: RegExp;
  paramNames: string[];
  isCatchAll: boolean;
  load: () => Promise<RouteModule>;
};

const API_ROOT = path.resolve(import.meta.dirname, "../../app/api/v1");

/** Turns app/api/v1's folders into URL patterns the way the App Router does ([name], [...path]). */
function discoverRoutes(dir = API_ROOT, segments: string[] = []): Route[] {
  const routes: Route[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) routes.push(...discoverRoutes(full, [...segments, entry]));
    else if (entry === "route.ts") {
      const paramNames: string[] = [];
      const source = segments
        .map((segment) => {
          const catchAll = /^\[\.\.\.(\w+)\]$/.exec(segment);
          if (catchAll?.[1]) {
            paramNames.push(catchAll[1]);
            return "(.+)";
          }
          const param = /^\[(\w+)\]$/.exec(segment);
          if (param?.[1]) {
            paramNames.push(param[1]);
            return "([^/]+)";
          }
          return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        })
        .join("/");
      routes.push({
        pattern: new RegExp(`^/api/v1${source ? `/${source}` : ""}$`),
        paramNames,
        isCatchAll: segments.some((segment) => segment.startsWith("[...")),
        load: () => import(full) as Promise<RouteModule>,
      });
    }
  }
  // Static segments win over dynamic ones, and the catch-all comes last, as in Next.
  return routes.sort(
    (a, b) =>
      Number(a.isCatchAll) - Number(b.isCatchAll) || a.paramNames.length - b.paramNames.length,
  );
}

async function toRequest(incoming: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const controller = new AbortController();
  incoming.socket.once("close", () => controller.abort());
  const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD" && chunks.length > 0;
  return new Request(`${origin}${incoming.url ?? "/"}`, {
    method: incoming.method ?? "GET",
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
    signal: controller.signal,
  });
}

/**
 * Serves the real /api/v1 route handlers over real HTTP without Next's build step, so tests can run
 * worker processes against them. Only routing is replaced; every handler is the production one.
 */
export async function startApiServer(): Promise<{
  url: string;
  server: Server;
  close: () => Promise<void>;
}> {
  const routes = discoverRoutes();
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    void (async () => {
      const origin = `http://${incoming.headers.host ?? "127.0.0.1"}`;
      const { pathname } = new URL(incoming.url ?? "/", origin);
      for (const route of routes) {
        const match = route.pattern.exec(pathname);
        if (!match) continue;
        const handler = (await route.load())[incoming.method ?? "GET"];
        if (!handler) break;
        const params = Object.fromEntries(
          route.paramNames.map((name, index) => [name, decodeURIComponent(match[index + 1] ?? "")]),
        );
        const response = await handler(await toRequest(incoming, origin), {
          params: Promise.resolve(params),
        });
        // Each Set-Cookie stays its own header (sign-in sets the session and the device cookie).
        const headers: Record<string, string | string[]> = Object.fromEntries(response.headers);
        const cookies = response.headers.getSetCookie();
        if (cookies.length > 0) headers["set-cookie"] = cookies;
        outgoing.writeHead(response.status, headers);
        outgoing.end(Buffer.from(await response.arrayBuffer()));
        return;
      }
      outgoing.writeHead(405, { "content-type": "application/json" });
      outgoing.end(
        JSON.stringify({ error: { code: "METHOD_NOT_ALLOWED", message: "method not allowed" } }),
      );
    })().catch((error: unknown) => {
      console.error("[test api server]", error);
      outgoing.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
