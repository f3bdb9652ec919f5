import { createServer, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Hono } from "hono";
import { z } from "zod";
import type { ClientGone } from "../../lib/http/client-gone";
import { createNodeListener } from "../../lib/http/node-listener";
import { defineRoute, type Access, type RouteContext } from "../../lib/http/route";
import { createApiApp, definePath } from "../../lib/http/router";
import { EventHub } from "../../lib/realtime/event-hub";
import { LongPollAnswer } from "../../lib/realtime/long-poll";
import { signedInHuman } from "../route-client";
import { registerAgent } from "./fixtures";

// A long-poll's answer is written by the node listener once it comes, after the router has let the
// request's state go (issue 18): what a client sees must not change, and nothing may be lost.

function opening() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** GET /api/v1/test-wait: a route that waits, for callers of `access`, answering `{ n }`. */
function testWaitPath<A extends Access>(
  access: A,
  handler: (
    context: RouteContext<A, undefined, undefined, undefined>,
  ) => Promise<Response | { n: number }> | LongPollAnswer<{ n: number }>,
) {
  const responses = { 200: z.object({ n: z.number() }) };
  return definePath("/api/v1/test-wait", {
    GET: defineRoute({ access, scopes: [], responses, waits: true }, handler),
  });
}

/** A waiting route whose answer comes when the test opens its gate or the client leaves. */
function waitingApi(answer: () => Response | { n: number } = () => ({ n: 1 })) {
  const gate = opening();
  const entered = opening();
  const left = opening();
  let seen: { request: Request; clientGone: ClientGone | undefined } | undefined;
  const path = testWaitPath("public", async ({ request, clientGone }) => {
    seen = { request, clientGone };
    entered.open();
    clientGone?.addEventListener("abort", { handleEvent: () => left.open() }, { once: true });
    await Promise.race([gate.opened, left.opened]);
    return answer();
  });
  const app = createApiApp([path]);
  // When the router's own answer to the listener resolves.
  let routerAnsweredAt: "before the gate" | "after the gate" | undefined;
  let isGateOpen = false;
  const fetchOfApp = app.fetch;
  app.fetch = (...args) => {
    const answered = fetchOfApp(...args);
    void Promise.resolve(answered).then(() => {
      routerAnsweredAt = isGateOpen ? "after the gate" : "before the gate";
    });
    return answered;
  };
  return {
    app,
    entered: entered.opened,
    left: left.opened,
    openGate: () => {
      isGateOpen = true;
      gate.open();
    },
    routerAnsweredAt: () => routerAnsweredAt,
    /** The request the route was called with, and how it was to hear its client leave. */
    seen: () => seen,
  };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** Serves the app on a node listener, as server.ts does; the last response it opened, to look into. */
async function serveOnNode(app: Hono) {
  let opened: ServerResponse | undefined;
  const listener = createNodeListener(app);
  const server = createServer((request, response) => {
    opened = response;
    void listener(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/api/v1/test-wait`, response: () => opened };
}

async function serve(api: ReturnType<typeof waitingApi>): Promise<string> {
  return (await serveOnNode(api.app)).url;
}

/** A long-poll as the API's own waiting routes answer: unwoken, it ends at its deadline. */
function unwokenLongPoll(clientGone: ClientGone | undefined, waitMs: number) {
  return new LongPollAnswer({
    hub: new EventHub(),
    key: "test-wait",
    deadline: Date.now() + waitMs,
    clientGone,
    source: { read: () => Promise.resolve({ n: 0 }), isDone: () => false },
  });
}

describe("a long-poll's deferred answer", () => {
  it("lets the router's state go while it waits, then answers as it would have", async () => {
    const api = waitingApi();
    const url = await serve(api);
    const response = fetch(url);
    await api.entered;
    await vi.waitFor(() => expect(api.routerAnsweredAt()).toBe("before the gate"));
    api.openGate();
    const answer = await response;
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(JSON.parse(text)).toEqual({ n: 1 });
    expect(answer.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(answer.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("is awaited, not deferred, in process and for HEAD", async () => {
    const inProcess = waitingApi();
    const answered = inProcess.app.fetch(new Request("http://127.0.0.1/api/v1/test-wait"));
    await inProcess.entered;
    inProcess.openGate();
    expect(await (await answered).json()).toEqual({ n: 1 });
    expect(inProcess.routerAnsweredAt()).toBe("after the gate");

    const head = waitingApi();
    const url = await serve(head);
    const response = fetch(url, { method: "HEAD" });
    await head.entered;
    head.openGate();
    const answer = await response;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("");
    expect(head.routerAnsweredAt()).toBe("after the gate");
  });

  it("tells the route when the client leaves while it waits, from the connection", async () => {
    const api = waitingApi();
    const url = await serve(api);
    const controller = new AbortController();
    const response = fetch(url, { signal: controller.signal }).catch(() => null);
    await api.entered;
    expect(api.seen()?.clientGone?.aborted).toBe(false);
    controller.abort();
    await api.left;
    expect(api.seen()?.clientGone?.aborted).toBe(true);
    expect(await response).toBeNull();
  });

  it("served, gives the request no AbortController to hold through the wait; in process, its signal", async () => {
    const api = waitingApi();
    const url = await serve(api);
    const response = fetch(url);
    await api.entered;
    const served = api.seen();
    expect(served?.clientGone).toBeDefined();
    expect(served?.clientGone).not.toBeInstanceOf(AbortSignal);
    // @hono/node-server makes a request's AbortController when its signal is first read.
    const request = served?.request as unknown as Record<symbol, unknown>;
    const held = Object.getOwnPropertySymbols(request).map((key) => request[key]);
    expect(held.some((value) => value instanceof AbortController)).toBe(false);
    api.openGate();
    expect((await response).status).toBe(200);

    const inProcess = waitingApi();
    const answered = inProcess.app.fetch(new Request("http://127.0.0.1/api/v1/test-wait"));
    await inProcess.entered;
    expect(inProcess.seen()?.clientGone).toBe(inProcess.seen()?.request.signal);
    inProcess.openGate();
    await answered;
  });

  it("served, holds neither the request, its headers nor the adapter's close listener while it waits", async () => {
    const agent = await registerAgent();
    const entered = opening();
    let request: WeakRef<Request> | undefined;
    const path = testWaitPath(
      "agent",
      // Not async: a suspended frame would hold the request itself.
      (context) => {
        request = new WeakRef(context.request);
        entered.open();
        return unwokenLongPoll(context.clientGone, 3_000);
      },
    );
    const { url, response } = await serveOnNode(createApiApp([path]));
    const answer = fetch(url, { headers: agent.headers });
    await entered.opened;
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // The adapter attaches its listener after the router returns, and lets it go after that.
    await vi.waitFor(
      () => {
        gc();
        // A boolean: a failed expectation holding the request would keep it alive for the next.
        expect(request?.deref() === undefined).toBe(true);
      },
      { timeout: 2_000 },
    );
    // The wait's own, which hears the client leave.
    expect(response()?.listenerCount("close")).toBe(1);
    // Node holds the request while its response is open; its headers it need not hold.
    expect(response()?.req.rawHeaders).toEqual([]);
    expect(response()?.req.headers).toEqual({});
    // Its caller read again from what the wait kept: still that agent, so it is answered.
    const answered = await answer;
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ n: 0 });
  });

  it.each([
    ["an agent's", () => registerAgent()],
    ["a session's", () => signedInHuman("viewer")],
  ])(
    "served, lets go of the headers only once the route has read them: %s wait",
    async (_, caller) => {
      const { headers } = await caller();
      let acceptReadByHandler: string | null | undefined;
      const path = testWaitPath("human_or_agent", (context) => {
        acceptReadByHandler = context.request.headers.get("accept");
        return unwokenLongPoll(context.clientGone, 1_000);
      });
      const { url, response } = await serveOnNode(createApiApp([path]));
      const sent = new Headers(headers);
      sent.set("accept", "application/json");
      const answer = fetch(url, { headers: sent });
      await vi.waitFor(() => expect(response()?.req.rawHeaders).toEqual([]), { timeout: 2_000 });
      // Read after the route resolved its caller, which waited on the database.
      expect(acceptReadByHandler).toBe("application/json");
      // Its caller read again at the answer from what the wait kept, not from the request.
      const answered = await answer;
      expect(answered.status).toBe(200);
      expect(await answered.json()).toEqual({ n: 0 });
    },
  );

  it("served, keeps what Node read of the released headers: keep-alive, and a close asked for", async () => {
    const agent = await registerAgent();
    const path = testWaitPath("agent", (context) => unwokenLongPoll(context.clientGone, 200));
    const { url, response } = await serveOnNode(createApiApp([path]));
    const { port } = new URL(url);
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    const ask = (connection: string) =>
      socket.write(
        `GET /api/v1/test-wait HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${agent.token}\r\n${connection}\r\n`,
      );
    const answers = () => received.split("HTTP/1.1 200").length - 1;
    // The first waits with its headers let go, is answered, and its connection stays open…
    ask("");
    await vi.waitFor(() => expect(response()?.req.rawHeaders).toEqual([]), { timeout: 2_000 });
    await vi.waitFor(() => expect(answers()).toBe(1), { timeout: 2_000 });
    expect(received.toLowerCase()).toContain("connection: keep-alive");
    // …for a second on the same connection, which asks for it to be closed once answered.
    const first = response();
    ask("Connection: close\r\n");
    await vi.waitFor(
      () => {
        expect(response()).not.toBe(first);
        expect(response()?.req.rawHeaders).toEqual([]);
      },
      { timeout: 2_000 },
    );
    await closed;
    expect(answers()).toBe(2);
    expect(received.toLowerCase().split("http/1.1 200")[2]).toContain("connection: close");
  });

  it("writes an answer that is not encoded JSON from its body, cookies and all", async () => {
    const api = waitingApi(
      () =>
        new Response("plain words", {
          status: 202,
          headers: [
            ["content-type", "text/plain"],
            ["set-cookie", "a=1"],
            ["set-cookie", "b=2"],
          ],
        }),
    );
    const url = await serve(api);
    const response = fetch(url);
    await api.entered;
    api.openGate();
    const answer = await response;
    expect(answer.status).toBe(202);
    expect(await answer.text()).toBe("plain words");
    expect(answer.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("a route's answer that cannot be made (a red-team finding)", () => {
  // `String(...)` of this throws, and the route's error mapping reads its message.
  const unformattable = () => ({ message: Object.create(null) as object });

  it("is a 500 in the API's shape, in process and served, and no unhandled rejection", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const inProcess = waitingApi(() => {
        throw unformattable();
      });
      const answered = inProcess.app.fetch(new Request("http://127.0.0.1/api/v1/test-wait"));
      await inProcess.entered;
      inProcess.openGate();
      const inProcessAnswer = await answered;
      expect(inProcessAnswer.status).toBe(500);
      expect(await inProcessAnswer.json()).toEqual({
        error: { code: "INTERNAL", message: "internal error" },
      });

      const api = waitingApi(() => {
        throw unformattable();
      });
      const response = fetch(await serve(api));
      await api.entered;
      api.openGate();
      const answer = await response;
      expect(answer.status).toBe(500);
      expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      logged.mockRestore();
    }
  });

  it("served, closes the connection when the answer cannot take the API's headers", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      // A redirect's headers are immutable: the API's security headers cannot be set on it.
      const api = waitingApi(() => Response.redirect("http://127.0.0.1/elsewhere", 302));
      const response = fetch(await serve(api), { redirect: "manual" }).then(
        (answer) => answer.status,
        () => "closed",
      );
      await api.entered;
      api.openGate();
      expect(await response).toBe("closed");
    } finally {
      logged.mockRestore();
    }
  });
});
