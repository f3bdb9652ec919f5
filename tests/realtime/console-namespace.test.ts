import { startConsoleServer } from "../support/console-server";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { logout } from "../../lib/api/v1/auth";
import { user as userPath } from "../../lib/api/v1/users";
import { callRoute, signedInHuman } from "../route-client";
import { getDb } from "../../lib/db";
import { openEvent } from "../support/open-event";
import type {
  ClientToServerEvents,
  ConsoleEvent,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";

type ConsoleClient = Socket<ServerToClientEvents, ClientToServerEvents>;

let baseUrl: string;
const servers: { stop: () => Promise<void> }[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  const server = await startConsoleServer();
  servers.push(server);
  ({ baseUrl } = server);
});

afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  for (const server of servers) await server.stop();
  await getDb().$disconnect();
});

/** A console as a browser on the console's own page opens it: the page's origin rides along. */
function openConsole(headers: Record<string, string> = {}, url = baseUrl): ConsoleClient {
  const socket: ConsoleClient = connect(`${url}/console`, {
    transports: ["websocket"],
    extraHeaders: { origin: url, ...headers },
    reconnection: false,
  });
  sockets.push(socket);
  return socket;
}

function connected(socket: ConsoleClient): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.on("connect", resolve);
    socket.on("connect_error", reject);
  });
}

function refused(socket: ConsoleClient): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.on("connect_error", (error) => resolve(error.message));
    socket.on("connect", () => reject(new Error("the socket was let in")));
  });
}

/** Resolves with the error code the server sent before it disconnected the socket. */
function disconnectedByServer(socket: ConsoleClient): Promise<string | undefined> {
  let code: string | undefined;
  socket.on("error", (payload) => (code = payload.code));
  return new Promise((resolve) =>
    socket.on("disconnect", (reason) => {
      if (reason === "io server disconnect") resolve(code);
    }),
  );
}

describe("/console namespace", () => {
  it("refuses a connection without a session", async () => {
    const socket = openConsole();
    const error = await new Promise<Error>((resolve) => socket.on("connect_error", resolve));
    expect(error.message).toBe("UNAUTHENTICATED");
  });

  it("lets the console's own page in with a Lead's cookie", async () => {
    const lead = await signedInHuman("lead");
    await connected(openConsole(lead.headers));
  });

  it.each([
    ["a page on another port of the same host", (url: string) => url.replace(/:\d+$/, ":5555")],
    [
      "the same port under another loopback name",
      (url: string) => url.replace("127.0.0.1", "localhost"),
    ],
    ["a sandboxed page (Origin: null)", () => "null"],
    ["a foreign site", () => "https://evil.example"],
    ["a malformed Origin", () => "http://"],
  ])("refuses %s even with a Lead's cookie", async (_what, originFor) => {
    const lead = await signedInHuman("lead");
    const socket = openConsole({ ...lead.headers, origin: originFor(baseUrl) });
    expect(await refused(socket)).toBe("CROSS_SITE_REQUEST");
  });

  it("refuses a handshake without an Origin even with a Lead's cookie", async () => {
    const lead = await signedInHuman("lead");
    const socket: ConsoleClient = connect(`${baseUrl}/console`, {
      transports: ["websocket"],
      extraHeaders: lead.headers,
      reconnection: false,
    });
    sockets.push(socket);
    expect(await refused(socket)).toBe("CROSS_SITE_REQUEST");
  });

  it("refuses socket.io's default namespace to everyone, the Lead included", async () => {
    // Red team, round nine: it checked no Origin and no session, and held strangers' connections.
    const lead = await signedInHuman("lead");
    for (const headers of [
      { origin: "https://evil.example" },
      { origin: baseUrl, ...lead.headers },
    ]) {
      const socket: ConsoleClient = connect(`${baseUrl}/`, {
        transports: ["websocket"],
        extraHeaders: headers,
        reconnection: false,
      });
      sockets.push(socket);
      expect(await refused(socket)).toBe("NOT_FOUND");
    }
  });

  it("drops a stranger's connection that joins no namespace, so none is held for free", async () => {
    const server = await startConsoleServer({ connectTimeoutMs: 300 });
    servers.push(server);
    const stranger: ConsoleClient = connect(`${server.baseUrl}/`, {
      transports: ["websocket"],
      extraHeaders: { origin: "https://evil.example" },
      reconnection: false,
    });
    sockets.push(stranger);
    expect(await refused(stranger)).toBe("NOT_FOUND");
    expect(server.io.engine.clientsCount).toBe(1);
    await vi.waitFor(() => expect(server.io.engine.clientsCount).toBe(0), { timeout: 3_000 });
  });

  it("replays every event after the resume cursor, in order", async () => {
    const lead = await signedInHuman("viewer");
    const db = getDb();
    const before = await db.event.create({ data: { kind: "test.before", subject: "resume" } });
    const missed = [];
    for (let i = 0; i < 3; i++) {
      missed.push(
        await db.event.create({ data: { kind: "test.missed", subject: "resume", data: { i } } }),
      );
    }
    const socket = openConsole(lead.headers);
    await new Promise<void>((resolve) => socket.on("connect", resolve));
    const received: ConsoleEvent[] = [];
    socket.on("event", (event) => received.push(event));
    const resumed = new Promise<{ lastId: number }>((resolve) => socket.on("resumed", resolve));
    socket.emit("resume", { after: Number(before.id) });
    const { lastId } = await resumed;
    const replayed = received.filter((event) => event.subject === "resume");
    expect(replayed.map((event) => event.id)).toEqual(missed.map((event) => Number(event.id)));
    expect(replayed[0]).toMatchObject({ kind: "test.missed", data: { i: 0 } });
    expect(lastId).toBeGreaterThanOrEqual(Number(missed.at(-1)?.id));
  });

  it("stops a replay before an id whose transaction is still open", async () => {
    const viewer = await signedInHuman("viewer");
    const db = getDb();
    const subject = `in-flight-${Math.random()}`;
    const before = await db.event.create({ data: { kind: "test.before", subject } });
    const inFlight = await openEvent(subject);
    try {
      await db.event.create({ data: { kind: "test.after-gap", subject } });
      const socket = openConsole(viewer.headers);
      await connected(socket);
      const received: ConsoleEvent[] = [];
      socket.on("event", (event) => received.push(event));
      const resumed = new Promise<{ lastId: number }>((resolve) => socket.on("resumed", resolve));
      socket.emit("resume", { after: Number(before.id) - 1 });
      // Replaying the later event would mark the one in flight as sent, and it would never come.
      // (Other test files write to the same log: their events below it may come too.)
      expect((await resumed).lastId).toBeLessThan(inFlight.id);
      expect(received.filter((event) => event.subject === subject)).toMatchObject([
        { kind: "test.before" },
      ]);
    } finally {
      await inFlight.end("rollback");
    }
  });

  it.each([
    ["an SQL-looking cursor", { after: "'; DROP TABLE events; --" }],
    ["a negative cursor", { after: -1 }],
    ["a fractional cursor", { after: 1.5 }],
    ["a cursor past 2^53", { after: 2 ** 60 }],
    ["an extra field", { after: 0, all: true }],
    ["a missing cursor", {}],
    ["null", null],
    ["a bare number", 5],
    ["an array", [0]],
    ["a huge string", "x".repeat(100_000)],
  ])("answers a resume with %s by a typed error and stays connected", async (_what, payload) => {
    const lead = await signedInHuman("lead");
    const socket = openConsole(lead.headers);
    await new Promise<void>((resolve) => socket.on("connect", resolve));
    const error = new Promise<{ code: string }>((resolve) => socket.on("error", resolve));
    socket.emit("resume", payload as never);
    expect(await error).toMatchObject({ code: "INVALID_INPUT" });
    expect(socket.connected).toBe(true);
  });

  it("answers twenty resumes with one replay: every resume gets its answer, every event comes once", async () => {
    const viewer = await signedInHuman("viewer");
    const db = getDb();
    const subject = `coalesce-${Math.random()}`;
    const before = await db.event.create({ data: { kind: "test.before", subject } });
    await db.event.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({ kind: "test.missed", subject, data: { i } })),
    });
    const socket = openConsole(viewer.headers);
    await connected(socket);
    const received: ConsoleEvent[] = [];
    socket.on("event", (event) => received.push(event));
    let answers = 0;
    const allAnswered = new Promise<void>((resolve) =>
      socket.on("resumed", () => {
        answers += 1;
        if (answers === 20) resolve();
      }),
    );
    for (let i = 0; i < 20; i++) socket.emit("resume", { after: Number(before.id) });
    await allAnswered;
    const replayed = received.filter((event) => event.subject === subject);
    expect(replayed).toHaveLength(30);
    expect(new Set(replayed.map((event) => event.id)).size).toBe(30);
  });

  it("does not replay a backlog past its bound: it tells the console to refetch instead", async () => {
    const server = await startConsoleServer({ maxReplayEvents: 5 });
    servers.push(server);
    const viewer = await signedInHuman("viewer");
    const db = getDb();
    const subject = `bound-${Math.random()}`;
    const before = await db.event.create({ data: { kind: "test.before", subject } });
    await db.event.createMany({
      data: Array.from({ length: 6 }, () => ({ kind: "test.missed", subject })),
    });
    const socket = openConsole(viewer.headers, server.baseUrl);
    await connected(socket);
    const received: ConsoleEvent[] = [];
    socket.on("event", (event) => received.push(event));
    const resumed = new Promise<{ lastId: number; isTruncated: boolean }>((resolve) =>
      socket.on("resumed", resolve),
    );
    socket.emit("resume", { after: Number(before.id) });
    const answer = await resumed;
    expect(answer.isTruncated).toBe(true);
    expect(answer.lastId).toBeGreaterThan(Number(before.id) + 5);
    expect(received.filter((event) => event.subject === subject)).toEqual([]);
  });

  it("ignores events a client is not allowed to send, and keeps serving it", async () => {
    const lead = await signedInHuman("lead");
    const socket = openConsole(lead.headers);
    await new Promise<void>((resolve) => socket.on("connect", resolve));
    (socket as unknown as { emit: (name: string, payload: unknown) => void }).emit("event", {
      id: 1,
      kind: "request.decided",
    });
    const resumed = new Promise((resolve) => socket.on("resumed", resolve));
    socket.emit("resume", { after: Number.MAX_SAFE_INTEGER });
    await resumed;
    expect(socket.connected).toBe(true);
  });
});

describe("/console sockets end with their session", () => {
  // The periodic re-check is set far beyond the test's wait, so these pass only through the
  // events (LISTEN/NOTIFY, as between web nodes); the last test covers the periodic one.
  let watchedUrl: string;

  beforeAll(async () => {
    const server = await startConsoleServer({ watchSessions: { intervalMs: 600_000 } });
    servers.push(server);
    watchedUrl = server.baseUrl;
  });

  it("disconnects a console whose user signed out", async () => {
    const viewer = await signedInHuman("viewer");
    const socket = openConsole(viewer.headers, watchedUrl);
    await connected(socket);
    const ended = disconnectedByServer(socket);
    const signedOut = await callRoute(logout.POST, {
      method: "POST",
      headers: { ...viewer.headers, origin: "http://127.0.0.1:3000" },
    });
    expect(signedOut.status).toBe(200);
    expect(await ended).toBe("SESSION_ENDED");
  });

  it.each([
    ["disabled", { disabled: true }, "viewer"],
    ["given another role", { role: "lead" }, "viewer"],
    ["demoted", { role: "viewer" }, "lead"],
  ] as const)("disconnects a console whose user was %s", async (_what, change, role) => {
    const lead = await signedInHuman("lead");
    const user = await signedInHuman(role);
    const socket = openConsole(user.headers, watchedUrl);
    await connected(socket);
    const ended = disconnectedByServer(socket);
    const { id } = await getDb().user.findUniqueOrThrow({ where: { email: user.email } });
    const updated = await callRoute(userPath.PATCH, {
      method: "PATCH",
      body: change,
      params: { id },
      headers: lead.headers,
    });
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);
    expect(await ended).toBe("SESSION_ENDED");
  });

  it("disconnects a console whose session expired, with no event to announce it", async () => {
    const server = await startConsoleServer({ watchSessions: { intervalMs: 200 } });
    servers.push(server);
    const viewer = await signedInHuman("viewer");
    const socket = openConsole(viewer.headers, server.baseUrl);
    await connected(socket);
    const ended = disconnectedByServer(socket);
    const { id } = await getDb().user.findUniqueOrThrow({ where: { email: viewer.email } });
    await getDb().session.updateMany({
      where: { userId: id },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    expect(await ended).toBe("SESSION_ENDED");
  });

  it("keeps a console whose session and role are unchanged", async () => {
    const server = await startConsoleServer({ watchSessions: { intervalMs: 100 } });
    servers.push(server);
    const viewer = await signedInHuman("viewer");
    const socket = openConsole(viewer.headers, server.baseUrl);
    await connected(socket);
    // Several re-checks pass; the socket must still be served.
    const resumed = new Promise((resolve) => setTimeout(resolve, 500)).then(
      () =>
        new Promise((resolve) => {
          socket.on("resumed", resolve);
          socket.emit("resume", { after: Number.MAX_SAFE_INTEGER });
        }),
    );
    await resumed;
    expect(socket.connected).toBe(true);
  });
});
