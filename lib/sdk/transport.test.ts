import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { text } from "node:stream/consumers";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { LOOPBACK_TLS_CERT, LOOPBACK_TLS_KEY } from "../../tests/support/loopback-tls";
import { makeTempDir } from "../../tests/support/temp-dirs";
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

  it("names a malformed address as unreachable rather than throwing something else", async () => {
    const transport = new HttpTransport("not a url", "token-token-token-token", { maxRetries: 0 });
    await expect(transport.call("GET", "/me", anything)).rejects.toBeInstanceOf(UnreachableError);
  });

  it("lets a process end as soon as its last call is answered (the idle connection is not held)", async () => {
    const server = await listen((_request, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'),
    );
    const startedAt = Date.now();
    expect(await callInChild(server.url)).toBe('{"ok":true}');
    // The server keeps an idle connection for 5 s: a process held open by it would take that long.
    expect(Date.now() - startedAt).toBeLessThan(4_000);
  });

  it("speaks TLS to an https address, trusting what the process trusts", async () => {
    const server = await listenTls();
    const trusted = path.join(await makeTempDir("handshake-tls-"), "ca.pem");
    writeFileSync(trusted, LOOPBACK_TLS_CERT);
    expect(await callInChild(server.url, { NODE_EXTRA_CA_CERTS: trusted })).toBe('{"tls":true}');
  });

  it("refuses an https server whose certificate it cannot trust, as unreachable", async () => {
    const server = await listenTls();
    const transport = new HttpTransport(server.url, "token-token-token-token");
    const call = transport.call("GET", "/me", anything);
    await expect(call).rejects.toBeInstanceOf(UnreachableError);
    await expect(call).rejects.toThrow("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(server.hits()).toBe(0);
  });
});

/** One call through the transport from a new Node process; returns what it printed. */
async function callInChild(url: string, env: Record<string, string> = {}): Promise<string> {
  const script = `
    import { HttpTransport } from ${JSON.stringify(new URL("./transport.ts", import.meta.url).pathname)};
    const anything = { safeParse: (data) => ({ success: true, data }) };
    console.log(JSON.stringify(await new HttpTransport(${JSON.stringify(url)}, "t").call("GET", "/me", anything)));
  `;
  // Asynchronously: the server answering it lives in this process.
  const child = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    { encoding: "utf8", timeout: 20_000, env: { ...process.env, ...env } },
  );
  expect(child.stderr).toBe("");
  return child.stdout.trim();
}

/** A loopback https server with the tests' self-signed certificate, answering `{"tls":true}`. */
async function listenTls(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createTlsServer(
    { cert: LOOPBACK_TLS_CERT, key: LOOPBACK_TLS_KEY },
    (_request, response) => {
      hits += 1;
      response.writeHead(200, { "content-type": "application/json" }).end('{"tls":true}');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => server.close();
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}
