import { Socket as NetSocket } from "node:net";

/** What this needs of socket.io's engine: the events it emits around each flush of a socket. */
export type FlushingEngine = {
  on(event: "flush" | "drain", listener: (socket: { transport: unknown }) => void): unknown;
};

/**
 * The TCP connection under an engine.io socket on the WebSocket transport; undefined on any
 * other transport (long-polling writes each flush as one HTTP answer already).
 */
function connectionOf(socket: { transport: unknown }): NetSocket | undefined {
  const transport = socket.transport as { name?: unknown; socket?: { _socket?: unknown } } | null;
  if (transport?.name !== "websocket") return undefined;
  // `ws` keeps its connection as `_socket`; nothing public reaches it.
  const connection = transport.socket?._socket;
  return connection instanceof NetSocket ? connection : undefined;
}

/**
 * Writes the packets engine.io flushes to a socket together in one system call. engine.io sends
 * the first packet of a burst at once and queues the next ones until that write completes, then
 * hands them to the WebSocket transport in one go, where `ws` writes each frame by itself: a new
 * request is four events and its row (decision 035), so five writes per console, each one waking
 * the reader. Between engine.io's `flush` and `drain`, which it emits around handing over the
 * queue, the connection is corked, so the queued frames leave in one `writev`. The uncork is
 * also queued for the next tick, so a flush that throws before its `drain` leaves nothing corked.
 */
export function coalesceFlushedFrames(engine: FlushingEngine): void {
  engine.on("flush", (socket) => {
    const connection = connectionOf(socket);
    if (!connection) return;
    connection.cork();
    process.nextTick(() => connection.uncork());
  });
  engine.on("drain", (socket) => connectionOf(socket)?.uncork());
}
