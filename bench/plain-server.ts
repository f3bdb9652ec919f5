import { createServer, type IncomingMessage } from "node:http";
import pg from "pg";

/**
 * The gate verdict's floor (issue 18): a plain `node:http` server that authenticates nothing and
 * does one INSERT through `pg` per call, run as its own process so it owns a core as the product
 * server does. `GET /health` answers without touching the database: the floor for a request's
 * round trip alone. `GET /api/v1/inbox?after=…&wait=…` holds the request for its wait and answers
 * an empty inbox, keeping nothing but the request and its timer: the floor of what an open
 * long-poll costs a `node:http` server (G3.4's memory per long-poll).
 *
 *   DATABASE_URL=… PORT=… node --import tsx bench/plain-server.ts
 */
const POOL_SIZE = 8;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function main(): void {
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: POOL_SIZE,
    application_name: "bench-plain-server",
  });
  const server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json; charset=utf-8" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "GET" && request.url === "/health") return reply(200, { ok: true });
    if (request.method === "GET" && request.url?.startsWith("/api/v1/inbox?")) {
      const query = new URL(request.url, "http://plain").searchParams;
      const cursor = Number(query.get("after") ?? 0);
      const timer = setTimeout(
        () => reply(200, { messages: [], cursor }),
        Number(query.get("wait") ?? 0) * 1000,
      );
      response.once("close", () => clearTimeout(timer));
      return;
    }
    if (request.method !== "POST" || request.url !== "/tool-calls") return reply(404, {});
    void readBody(request)
      .then((text) =>
        pool.query<{ id: string }>(
          "INSERT INTO raw_plain (agent, payload) VALUES ($1, $2) RETURNING id",
          ["plain", text],
        ),
      )
      .then(({ rows }) => reply(200, { allowed: true, id: rows[0]?.id }))
      .catch((error: unknown) => reply(500, { error: String(error) }));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), "127.0.0.1", () => {
    console.log(`plain server listening on ${process.env.PORT}`);
  });
  const stop = () => {
    server.close(() => void pool.end().then(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main();
