import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A loopback TCP proxy in front of a web node that can lose responses: the request reaches the
 * server (and commits), but the client never sees the answer. Modes:
 * - `pass`: forwards both ways;
 * - `swallow`: forwards requests, drops responses (the client hangs, as with a half-open link);
 * - `reset`: forwards requests; when the response starts, resets the client's connection.
 */
export type ProxyMode = "pass" | "swallow" | "reset";

export async function startFaultProxy(targetPort: number): Promise<{
  url: string;
  /** With `once`, the proxy returns to `pass` after losing one response. */
  setMode: (mode: ProxyMode, options?: { once?: boolean }) => void;
  /** Responses dropped or reset so far. */
  lostResponses: () => number;
  close: () => Promise<void>;
}> {
  let mode: ProxyMode = "pass";
  let isOnce = false;
  let lost = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    const connectionMode = mode;
    let isResponseLost = false;
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      if (connectionMode === "pass") {
        client.write(chunk);
        return;
      }
      if (!isResponseLost) {
        isResponseLost = true;
        lost += 1;
        if (isOnce) mode = "pass";
      }
      if (connectionMode === "reset") client.resetAndDestroy();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end);
    upstream.on("close", end);
    client.on("error", end);
    upstream.on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setMode: (next, options = {}) => {
      mode = next;
      isOnce = options.once ?? false;
    },
    lostResponses: () => lost,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
