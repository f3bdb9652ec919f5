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

  it("answers a malformed resume with a typed error and stays connected", async () => {
    const lead = await signedInHuman("lead");
    const socket = openConsole(lead.headers);
    await new Promise<void>((resolve) => socket.on("connect", resolve));
    const error = new Promise<{ code: string }>((resolve) => socket.on("error", resolve));
    socket.emit("resume", { after: "'; DROP TABLE events; --" } as never);
    expect(await error).toMatchObject({ code: "INVALID_INPUT" });
    expect(socket.connected).toBe(true);
  });
});
