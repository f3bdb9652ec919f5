import { Socket as NetSocket } from "node:net";

/** What this needs of an engine.io socket's transport. */
type EngineTransport = {
  name?: unknown;
  writable?: unknown;
  socket?: { _socket?: unknown };
  emit?: unknown;
};

/** What this needs of an engine.io socket. */
export type EngineSocket = {
  transport: unknown;
  on(event: "packetCreate", listener: () => void): unknown;
};

/** What this needs of socket.io's engine: its new sockets and the events around each flush. */
export type FlushingEngine = {
  on(event: "connection", listener: (socket: EngineSocket) => void): unknown;
  on(event: "flush" | "drain", listener: (socket: { transport: unknown }) => void): unknown;
};

/** The transport of an engine.io socket when it is the WebSocket one; undefined on any other. */
function webSocketTransportOf(socket: { transport: unknown }): EngineTransport | undefined {
  const transport = socket.transport as EngineTransport | null;
  return transport?.name === "websocket" ? transport : undefined;
}

/**
 * The TCP connection under an engine.io socket on the WebSocket transport; undefined on any
 * other transport (long-polling writes each flush as one HTTP answer already).
 */
function connectionOf(socket: { transport: unknown }): NetSocket | undefined {
  // `ws` keeps its connection as `_socket`; nothing public reaches it.
  const connection = webSocketTransportOf(socket)?.socket?._socket;
  return connection instanceof NetSocket ? connection : undefined;
}

/**
 * Holds a socket's writes from its first packet in this tick to the tick's end, then flushes
 * them as one. engine.io writes a socket's first packet at once and queues the next ones until
 * that write completes: a new request's four events (decision 035) left in two writes per
 * console, and every console's first write came before any console's second, which carried the
 * event the Lead acts on. Marking the idle transport unwritable queues the packets engine.io
 * creates meanwhile; the transport's own `ready`, which engine.io answers with a flush, lets them
 * go. A transport already busy with a write queues them by itself and is left alone.
 */
function holdUntilTickEnds(socket: EngineSocket): void {
  const transport = webSocketTransportOf(socket);
  if (transport?.writable !== true) return;
  transport.writable = false;
  process.nextTick(release, transport);
}

function release(transport: EngineTransport): void {
  transport.writable = true;
  if (typeof transport.emit === "function") transport.emit("ready");
}

/**
 * Writes what socket.io sends a console in one tick as one system call: a new request's events
 * reach each console together instead of one console's second write waiting behind every
 * console's first (holdUntilTickEnds), and `ws`, which writes each frame of a flush by itself,
 * has its connection corked between engine.io's `flush` and the `drain` that follows
 * synchronously, so the frames leave in one `writev`. The uncork is also queued for the next
 * tick, so a flush that throws before its `drain` leaves nothing corked.
 */
export function coalesceFlushedFrames(engine: FlushingEngine): void {
  engine.on("connection", (socket) => {
    socket.on("packetCreate", () => holdUntilTickEnds(socket));
  });
  engine.on("flush", (socket) => {
    const connection = connectionOf(socket);
    if (!connection) return;
    connection.cork();
    process.nextTick(() => connection.uncork());
  });
  engine.on("drain", (socket) => connectionOf(socket)?.uncork());
}
