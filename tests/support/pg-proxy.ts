import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A loopback TCP proxy in front of PostgreSQL that can be taken down, as a database restart is:
 * its connections cut and new ones refused until it is up again.
 */
export async function startPgProxy(target = { host: "127.0.0.1", port: 5432 }) {
  let isDown = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (isDown) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      socket.on("close", end);
      socket.on("error", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The same database URL, through the proxy. */
    via(databaseUrl: string): string {
      const url = new URL(databaseUrl);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    down(): void {
      isDown = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    up(): void {
      isDown = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
