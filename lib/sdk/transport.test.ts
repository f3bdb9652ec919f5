import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { text } from "node:stream/consumers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ApiError, UnreachableError } from "./errors";
import { HttpTransport } from "./transport";

const anything = z.unknown();

let close: (() => void) | undefined;
afterEach(() => close?.());

/** A loopback server; `connections` counts the TCP connections its clients opened. */
async function listen(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createServer(handle);
  server.on("connection", () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => server.close();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

/** A loopback server answering each request with the next scripted status. */
async function serve(statuses: number[]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = await listen((_request, response) => {
    const status = statuses[Math.min(hits, statuses.length - 1)] ?? 200;
    hits += 1;
    const body =
      status === 200
        ? { ok: true }
        : { error: { code: status === 503 ? "DATABASE_UNAVAILABLE" : "FORBIDDEN", message: "no" } };
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  return { url: server.url, hits: () => hits };
}

describe("HttpTransport", () => {
  it("retries while the server's database is unavailable (503), then returns the answer", async () => {
    const server = await serve([503, 503, 200]);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    expect(await transport.call("GET", "/me", anything)).toEqual({ ok: true });
    expect(server.hits()).toBe(3);
  });

  it("does not retry a refusal: it is an answer", async () => {
    const server = await serve([403, 200]);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    await expect(transport.call("GET", "/me", anything)).rejects.toBeInstanceOf(ApiError);
    expect(server.hits()).toBe(1);
  });

  it("gives up on 503 after its retry budget", async () => {
    const server = await serve([503]);
    const transport = new HttpTransport(server.url, "token-token-token-token", { maxRetries: 2 });
    await expect(transport.call("GET", "/me", anything)).rejects.toMatchObject({
      status: 503,
      code: "DATABASE_UNAVAILABLE",
    });
    expect(server.hits()).toBe(3);
  });

  it("names an unreachable server as such, after its retry budget", async () => {
    const transport = new HttpTransport("http://127.0.0.1:9", "token-token-token-token", {
      maxRetries: 0,
    });
    await expect(transport.call("GET", "/me", anything)).rejects.toBeInstanceOf(UnreachableError);
  });

  it("refuses an answer that does not match the schema it expects", async () => {
    const server = await serve([200]);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    await expect(transport.call("GET", "/me", z.object({ id: z.string() }))).rejects.toMatchObject({
      code: "INVALID_RESPONSE",
    });
  });

  it("sends the body whole, with its length in bytes, and the bearer token", async () => {
    const server = await listen((request, response) => {
      void text(request).then((body) =>
        response.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            body: JSON.parse(body) as unknown,
            length: request.headers["content-length"],
            authorization: request.headers.authorization,
          }),
        ),
      );
    });
    const transport = new HttpTransport(server.url, "token-token-token-token");
    const plan = "déployer → prod ✓";
    expect(await transport.call("POST", "/requests", anything, { body: { plan } })).toEqual({
      body: { plan },
      length: String(Buffer.byteLength(JSON.stringify({ plan }))),
      authorization: "Bearer token-token-token-token",
    });
  });

  it("keeps its connection for the next call", async () => {
    const server = await listen((_request, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end("{}"),
    );
    const transport = new HttpTransport(server.url, "token-token-token-token");
    for (let index = 0; index < 5; index++) await transport.call("GET", "/me", anything);
    expect(server.connections()).toBe(1);
  });

  it("rejects with the caller's own reason when the caller aborts, and does not retry", async () => {
    const server = await listen(() => undefined);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    const controller = new AbortController();
    const reason = new Error("the agent is shutting down");
    const call = transport.call("GET", "/inbox?wait=30", anything, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(call).rejects.toBe(reason);
  });

  it("names a server that does not answer in time as unreachable", async () => {
    const server = await listen(() => undefined);
    const transport = new HttpTransport(server.url, "token-token-token-token", { timeoutMs: 100 });
    const call = transport.call("GET", "/me", anything);
    await expect(call).rejects.toBeInstanceOf(UnreachableError);
    await expect(call).rejects.toThrow("no answer in time");
  });

  it("names an answer whose body stops coming as unreachable when its deadline passes", async () => {
    const server = await listen((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"partly":');
    });
    const transport = new HttpTransport(server.url, "token-token-token-token", {
      timeoutMs: 100,
      maxRetries: 0,
    });
    const call = transport.call("GET", "/me", anything);
    await expect(call).rejects.toBeInstanceOf(UnreachableError);
    await expect(call).rejects.toThrow("no answer in time");
  });

  it("leaves no deadline pending once a call is answered", async () => {
    const server = await listen((_request, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end("{}"),
    );
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const transport = new HttpTransport(server.url, "token-token-token-token");
      await transport.call("GET", "/me", anything);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not follow a redirect: its token goes nowhere but the address it was given", async () => {
    let elsewhereHits = 0;
    const elsewhere = createServer((_request, response) => {
      elsewhereHits += 1;
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/api/v1/me`;
    try {
      const server = await listen((_request, response) =>
        response.writeHead(302, { location: target }).end(),
      );
      const transport = new HttpTransport(server.url, "token-token-token-token");
      await expect(transport.call("GET", "/me", anything)).rejects.toMatchObject({ status: 302 });
      expect(elsewhereHits).toBe(0);
    } finally {
      elsewhere.close();
    }
  });

  it("names a malformed address as unreachable rather than throwing something else", async () => {
    const transport = new HttpTransport("not a url", "token-token-token-token", { maxRetries: 0 });
    await expect(transport.call("GET", "/me", anything)).rejects.toBeInstanceOf(UnreachableError);
  });
});
