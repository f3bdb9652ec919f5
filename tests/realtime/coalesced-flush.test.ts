import { createServer } from "node:http";
import { EventEmitter } from "node:events";
import { Socket as NetSocket, type AddressInfo } from "node:net";
import { Server, type Socket as ServerSocket } from "socket.io";
import { io as connect, type Socket as ClientSocket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { coalesceFlushedFrames } from "../../lib/realtime/coalesced-flush";

type Started = { io: Server; client: ClientSocket; serverSocket: ServerSocket };
const started: Started[] = [];

afterEach(async () => {
  const servers = new Set<Server>();
  for (const { client, io } of started.splice(0)) {
    client.disconnect();
    servers.add(io);
  }
  for (const io of servers) await io.close();
});

async function start(isCoalescing: boolean): Promise<Started> {
  const http = createServer();
  const io = new Server(http);
  if (isCoalescing) coalesceFlushedFrames(io.engine);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return connectAnother(io);
}

/** Connects one more client to a started server. */
async function connectAnother(io: Server): Promise<Started> {
  const connected = new Promise<ServerSocket>((resolve) => io.once("connection", resolve));
  const port = (io.httpServer.address() as AddressInfo).port;
  const client = connect(`http://127.0.0.1:${port}`, {
    transports: ["websocket"],
    reconnection: false,
  });
  const serverSocket = await connected;
  await new Promise<void>((resolve) =>
    client.connected ? resolve() : client.on("connect", resolve),
  );
  const entry = { io, client, serverSocket };
  started.push(entry);
  return entry;
}

/** Counts the writes the server's TCP connection to this client hands to the kernel. */
function countWrites(serverSocket: ServerSocket): () => number {
  const transport = serverSocket.conn.transport as unknown as { socket: { _socket: NetSocket } };
  const connection = transport.socket._socket as NetSocket & {
    _write: (...args: unknown[]) => void;
    _writev: (...args: unknown[]) => void;
  };
  let writes = 0;
  for (const method of ["_write", "_writev"] as const) {
    const original = connection[method].bind(connection);
    connection[method] = (...args: unknown[]) => {
      writes += 1;
      original(...args);
    };
  }
  return () => writes;
}

function receive(client: ClientSocket, count: number): Promise<number[]> {
  const received: number[] = [];
  return new Promise((resolve) => {
    client.on("event", (value: number) => {
      received.push(value);
      if (received.length === count) resolve(received);
    });
  });
}

/** Emits events 1 to 5 in one tick; resolves with what the client received, once it has all five. */
function burstOfFive(client: ClientSocket, serverSocket: ServerSocket): Promise<number[]> {
  const arrived = receive(client, 5);
  for (let value = 1; value <= 5; value++) serverSocket.emit("event", value);
  return arrived;
}

describe("a console's flushed packets leave in one write (lib/realtime/coalesced-flush.ts)", () => {
  it("writes a burst of five events emitted in one tick in one write", async () => {
    const { client, serverSocket } = await start(true);
    const writes = countWrites(serverSocket);
    expect(await burstOfFive(client, serverSocket)).toEqual([1, 2, 3, 4, 5]);
    expect(writes()).toBe(1);
  });

  it("writes a broadcast burst to each of several consoles in one write", async () => {
    const first = await start(true);
    const second = await connectAnother(first.io);
    const writes = [countWrites(first.serverSocket), countWrites(second.serverSocket)];
    const arrived = [receive(first.client, 5), receive(second.client, 5)];
    for (let value = 1; value <= 5; value++) first.io.emit("event", value);
    expect(await Promise.all(arrived)).toEqual([
      [1, 2, 3, 4, 5],
      [1, 2, 3, 4, 5],
    ]);
    expect(writes.map((count) => count())).toEqual([1, 1]);
  });

  it("writes events emitted in separate ticks separately, without waiting for a later one", async () => {
    const { client, serverSocket } = await start(true);
    const writes = countWrites(serverSocket);
    const first = receive(client, 1);
    serverSocket.emit("event", 1);
    expect(await first).toEqual([1]);
    client.off("event");
    const second = receive(client, 1);
    serverSocket.emit("event", 2);
    expect(await second).toEqual([2]);
    expect(writes()).toBe(2);
  });

  it("leaves the connection uncorked: an event sent later still arrives on its own", async () => {
    const { client, serverSocket } = await start(true);
    await burstOfFive(client, serverSocket);
    client.off("event");
    const writes = countWrites(serverSocket);
    const later = receive(client, 1);
    serverSocket.emit("event", 6);
    expect(await later).toEqual([6]);
    expect(writes()).toBe(1);
  });

  it("leaves a transport that is writing, or not a WebSocket, to engine.io", async () => {
    const engine = new EventEmitter();
    coalesceFlushedFrames(engine);
    const busy = Object.assign(new EventEmitter(), { name: "websocket", writable: false });
    const polling = Object.assign(new EventEmitter(), { name: "polling", writable: true });
    const idle = Object.assign(new EventEmitter(), { name: "websocket", writable: true });
    const readied: string[] = [];
    for (const [label, transport] of [
      ["busy", busy],
      ["polling", polling],
      ["idle", idle],
    ] as const) {
      transport.on("ready", () => readied.push(label));
      const socket = Object.assign(new EventEmitter(), { transport });
      engine.emit("connection", socket);
      socket.emit("packetCreate");
    }
    expect([busy.writable, polling.writable, idle.writable]).toEqual([false, true, false]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect([busy.writable, polling.writable, idle.writable]).toEqual([false, true, true]);
    expect(readied).toEqual(["idle"]);
  });

  it("uncorks a flush that never drained on the next tick, and leaves other transports alone", async () => {
    const engine = new EventEmitter();
    coalesceFlushedFrames(engine);
    const connection = new NetSocket();
    const polled = new NetSocket();
    try {
      engine.emit("flush", { transport: { name: "websocket", socket: { _socket: connection } } });
      expect(connection.writableCorked).toBe(1);
      await new Promise((resolve) => process.nextTick(resolve));
      expect(connection.writableCorked).toBe(0);
      engine.emit("flush", { transport: { name: "polling", socket: { _socket: polled } } });
      expect(polled.writableCorked).toBe(0);
    } finally {
      connection.destroy();
      polled.destroy();
    }
  });

  it("without it, engine.io writes each queued frame by itself", async () => {
    const { client, serverSocket } = await start(false);
    const writes = countWrites(serverSocket);
    expect(await burstOfFive(client, serverSocket)).toEqual([1, 2, 3, 4, 5]);
    expect(writes()).toBe(5);
  });
});
