import { startConsoleServer } from "../support/console-server";
import { io as connect, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedInHuman } from "../route-client";
import { getDb } from "../../lib/db";
import type { ConsoleServer } from "../../lib/realtime/console-namespace";
import type {
  ClientToServerEvents,
  ConsoleEvent,
  ServerToClientEvents,
} from "../../lib/realtime/contract";

let io: ConsoleServer;
let baseUrl: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  ({ io, baseUrl } = await startConsoleServer());
});

afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await io.close();
  await getDb().$disconnect();
});

function openConsole(
  headers: Record<string, string> = {},
): Socket<ServerToClientEvents, ClientToServerEvents> {
  const socket: Socket<ServerToClientEvents, ClientToServerEvents> = connect(`${baseUrl}/console`, {
    transports: ["websocket"],
    extraHeaders: headers,
    reconnection: false,
  });
  sockets.push(socket);
  return socket;
}

describe("/console namespace", () => {
  it("refuses a connection without a session", async () => {
    const socket = openConsole();
    const error = await new Promise<Error>((resolve) => socket.on("connect_error", resolve));
    expect(error.message).toBe("UNAUTHENTICATED");
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
