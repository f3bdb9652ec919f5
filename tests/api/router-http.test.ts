import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

vi.hoisted(() => {
  process.env.HANDSHAKE_AGENT_OPEN_LONG_POLLS = "2";
});

import { takeLongPollSlot } from "../../lib/agents/limits";
import { CLIENT_IP_HEADER } from "../../lib/auth/sign-in-limit";
import { SESSION_KEY_HEADER } from "../../lib/shared/auth/session-key";
import { getDb } from "../../lib/db";
import { createHttpServer, createNodeListener } from "../../lib/http/node-listener";
import { jsonResponse } from "../../lib/http/route";
import { isApiTarget } from "../../lib/http/router";
import { stampClientAddress } from "../../lib/realtime/web-node";
import { startApiServer } from "../support/api-server";
import { signedInHuman } from "../route-client";
import { registerAgent } from "./fixtures";

// The API's router over real HTTP, as server.ts serves it: what the in-process tests cannot see.
let server: Awaited<ReturnType<typeof startApiServer>>;

beforeAll(async () => {
  server = await startApiServer();
});

afterAll(async () => {
  await server.close();
  await getDb().$disconnect();
});

/** What the server writes back to `text` sent as is, up to its close. */
function exchange(url: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString("latin1")));
    socket.on("close", () => resolve(answer));
    socket.on("error", () => resolve(answer));
    socket.write(text);
  });
}

describe("a request Node cannot read as HTTP", () => {
  // Round nine: these got Node's bare answers, without the API's error shape or its headers.
  it.each([
    [
      "headers over 16 KiB",
      `GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      "431",
      "HEADERS_TOO_LARGE",
    ],
    [
      "Content-Length beside Transfer-Encoding",
      "POST /api/v1/inbox/ack HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "400",
      "INVALID_INPUT",
    ],
    [
      "a bad request line",
      "GET /api/v1/health HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
      "400",
      "INVALID_INPUT",
    ],
  ])("%s: answered in the API's shape, with its headers", async (_label, text, status, code) => {
    const answer = await exchange(server.url, text);
    const [head = "", body = ""] = answer.split("\r\n\r\n");
    expect(head.split("\r\n")[0]).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toMatch(/^content-security-policy: default-src 'none'/im);
    expect(head).toMatch(/^x-content-type-options: nosniff/im);
    expect(JSON.parse(body)).toMatchObject({ error: { code } });
  });

  it("closes a request that timed out, though its client never closes its side", async () => {
    // Review, round nine: ending only this side left the half-open socket with no timeout on it,
    // a descriptor for anyone who sends half a request and waits.
    const slow = createHttpServer(() => undefined, {
      headersTimeout: 300,
      requestTimeout: 300,
      connectionsCheckingInterval: 100,
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const { port } = slow.address() as AddressInfo;
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString("latin1")));
    socket.write("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const openConnections = () =>
      new Promise<number>((resolve, reject) =>
        slow.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    try {
      await vi.waitFor(() => expect(answer).toContain('"code":"REQUEST_TIMEOUT"'), {
        timeout: 5_000,
        interval: 50,
      });
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
      await vi.waitFor(async () => expect(await openConnections()).toBe(0), {
        timeout: 2_000,
        interval: 50,
      });
    } finally {
      socket.destroy();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});

describe("the API's router over HTTP", () => {
  it("keeps a sign-in's cookie, and the session it carries works beside its key", async () => {
    const { email, password } = await signedInHuman("viewer");
    const response = await fetch(`${server.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    expect(response.status).toBe(200);
    const cookies = response.headers.getSetCookie();
    expect(cookies.length).toBeGreaterThanOrEqual(1);
    const cookie = cookies.map((header) => header.split(";")[0]).join("; ");
    const { sessionKey } = (await response.json()) as { sessionKey: string };
    const agents = await fetch(`${server.url}/api/v1/agents`, {
      headers: { cookie, [SESSION_KEY_HEADER]: sessionKey },
    });
    expect(agents.status).toBe(200);
  });

  it("releases an aborted long-poll's slot", async () => {
    const agent = await registerAgent();
    const poll = (wait: number, signal?: AbortSignal) =>
      fetch(`${server.url}/api/v1/inbox?wait=${wait}`, { headers: agent.headers, signal });
    const { id } = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    // Probed in the process, taken and given back at once: a probe over HTTP held a slot for its
    // own wait, and admitted before the two below (a loaded machine reorders them) it kept one
    // of them out, so the slots never all filled.
    const isFull = () => {
      try {
        takeLongPollSlot(id).release();
        return false;
      } catch {
        return true;
      }
    };
    const controller = new AbortController();
    const openedAt = Date.now();
    const open = [poll(30, controller.signal), poll(30, controller.signal)].map((pending) =>
      pending.catch(() => null),
    );
    // Both slots are held while the two wait, and given back once they are aborted.
    await vi.waitFor(() => expect(isFull()).toBe(true), { timeout: 20_000 });
    expect((await poll(1)).status).toBe(429);
    controller.abort();
    await Promise.all(open);
    await vi.waitFor(() => expect(isFull()).toBe(false), { timeout: 20_000 });
    expect((await poll(1)).status).toBe(200);
    // Unaborted, both would have held their slots for their whole 30 s.
    expect(Date.now() - openedAt).toBeLessThan(29_000);
  }, 60_000);

  it("answers unknown paths and wrong methods in the JSON shape", async () => {
    const unknown = await fetch(`${server.url}/api/v1/nope`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: "ROUTE_NOT_FOUND" } });
    const wrong = await fetch(`${server.url}/api/v1/health`, { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
  });

  it("answers a request it cannot read (a malformed Host) in the JSON shape, with its headers", async () => {
    // The adapter answered these with an empty 400 and none of the API's security headers.
    const { port } = new URL(server.url);
    for (const host of ["a b", "x:99999", "%%"]) {
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.write(`GET /api/v1/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        });
        let received = "";
        socket.on("data", (chunk) => (received += chunk.toString("utf8")));
        socket.on("close", () => resolve(received));
        socket.on("error", reject);
        socket.setTimeout(5_000, () => socket.destroy());
      });
      const [head = "", body = ""] = reply.split("\r\n\r\n");
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head.toLowerCase()).toContain("content-security-policy: default-src 'none'");
      expect(JSON.parse(body)).toMatchObject({
        error: { code: "INVALID_INPUT", message: expect.stringContaining("cannot be read") },
      });
    }
  });

  it("keeps an idle keep-alive socket past Node's 5 s, so a client's pause is not a reset", async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    let closedAfterMs: number | null = null;
    const openedAt = Date.now();
    socket.on("data", (chunk) => (received += chunk.toString("utf8")));
    socket.on("close", () => (closedAfterMs = Date.now() - openedAt));
    const ask = () => socket.write("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const answers = () => received.match(/HTTP\/1\.1 200 /g)?.length ?? 0;
    try {
      ask();
      await vi.waitFor(() => expect(answers()).toBe(1));
      expect(received.toLowerCase()).toContain("keep-alive: timeout=65");
      await new Promise((resolve) => setTimeout(resolve, 5_600));
      expect(closedAfterMs).toBeNull();
      ask();
      await vi.waitFor(() => expect(answers()).toBe(2));
    } finally {
      socket.destroy();
    }
  }, 20_000);
});

/** Serves `app` through the node listener on a free port while `run` runs. */
async function servedBy<T>(app: Hono, run: (origin: string) => Promise<T>): Promise<T> {
  const probe = createServer(
    (request, response) => void createNodeListener(app)(request, response),
  );
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = probe.address() as AddressInfo;
    return await run(`http://127.0.0.1:${port}`);
  } finally {
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }
}

describe("how the node listener writes answers", () => {
  it("writes a JSON answer from its text, never reading the Response's stream back", async () => {
    const answers: Response[] = [];
    const app = new Hono().get("/", () => {
      const answer = jsonResponse({ word: "déjà ✓" }, { status: 201, headers: { "x-a": "1" } });
      answers.push(answer);
      return answer;
    });
    await servedBy(app, async (origin) => {
      const response = await fetch(`${origin}/`);
      const text = await response.text();
      expect(response.status).toBe(201);
      expect(JSON.parse(text)).toEqual({ word: "déjà ✓" });
      expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(response.headers.get("x-a")).toBe("1");
    });
    expect(answers).toHaveLength(1);
    expect(answers[0]?.bodyUsed).toBe(false);
  });

  it("writes each Set-Cookie of an answer on a line of its own", async () => {
    // Joined into one line, a browser would keep only the first cookie. A sign-in sets one now
    // (decision 080), so the route here sets two.
    const app = new Hono().get("/", () => {
      const headers = new Headers();
      headers.append("set-cookie", "a=1; Path=/");
      headers.append("set-cookie", "b=2; Path=/");
      return jsonResponse({ ok: true }, { headers });
    });
    await servedBy(app, async (origin) => {
      const response = await fetch(`${origin}/`);
      expect(await response.json()).toEqual({ ok: true });
      expect(response.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    });
  });

  it("answers an app that rejects with the API's logged 500, never a bare one", async () => {
    // The router never rejects; were it to, the adapter's own answer was an empty 500.
    const rejecting = { fetch: () => Promise.reject(new Error("boom")) } as unknown as Hono;
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      await servedBy(rejecting, async (origin) => {
        const response = await fetch(`${origin}/api/v1/health`);
        expect(response.status).toBe(500);
        expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
        expect(await response.json()).toEqual({
          error: { code: "INTERNAL", message: "internal error" },
        });
      });
      expect(errors).toHaveBeenCalledWith("[api] unexpected error", new Error("boom"));
    } finally {
      errors.mockRestore();
    }
  });

  it("keeps the API's security headers on answers it writes, and HEAD without a body", async () => {
    for (const method of ["GET", "HEAD"]) {
      const response = await fetch(`${server.url}/api/v1/health`, { method });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(await response.text()).toEqual(method === "HEAD" ? "" : expect.stringContaining("{"));
    }
  });

  it("refuses a chunked body past the cap, which declares no length to check first", async () => {
    const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"email":"'));
        if (sent >= 8) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += 1;
      },
    });
    const response = await fetch(`${server.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE" } });
  });
});

describe("what bounds a body read in one piece", () => {
  it("is the parser: a request declaring both a length and chunked framing never reaches a route", async () => {
    const { port } = new URL(server.url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(
          [
            "POST /api/v1/auth/login HTTP/1.1",
            "Host: 127.0.0.1",
            "Content-Type: application/json",
            "Content-Length: 2",
            "Transfer-Encoding: chunked",
            "",
            "2",
            "{}",
            "0",
            "",
            "",
          ].join("\r\n"),
        );
      });
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString("latin1")));
      socket.on("close", () => resolve(received));
      socket.on("error", reject);
      socket.setTimeout(5_000, () => socket.destroy());
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe("the client address the router sees", () => {
  it("is the socket's, whatever the client claims and however the headers are read", async () => {
    const echo = new Hono().get("/", (context) => {
      const looked = context.req.raw.headers.get(CLIENT_IP_HEADER);
      // Iterating materialises the headers from rawHeaders: a second way to read them.
      const iterated = Object.fromEntries(context.req.raw.headers)[CLIENT_IP_HEADER];
      return context.json({ looked, iterated });
    });
    const listener = getRequestListener(echo.fetch, { overrideGlobalObjects: false });
    const probe = createServer((request, response) => {
      stampClientAddress(request);
      void listener(request, response);
    });
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = probe.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/`, {
        headers: { [CLIENT_IP_HEADER]: "203.0.113.66", "X-Handshake-Client-IP": "203.0.113.67" },
      });
      expect(await response.json()).toEqual({ looked: "127.0.0.1", iterated: "127.0.0.1" });
    } finally {
      await new Promise<void>((resolve) => probe.close(() => resolve()));
    }
  });
});

describe("which requests the router takes", () => {
  it("takes /api/v1 and everything under it, nothing else", () => {
    for (const target of ["/api/v1", "/api/v1/", "/api/v1?x=1", "/api/v1/agents/a"]) {
      expect(isApiTarget(target), target).toBe(true);
    }
    for (const target of ["/", "/api/v10", "/api/v1x", "/api", "/team?next=/api/v1/"]) {
      expect(isApiTarget(target), target).toBe(false);
    }
  });
});
