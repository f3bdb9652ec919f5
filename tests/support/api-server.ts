import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApi } from "../../lib/api/v1/routes";
import { createHttpServer, createNodeListener } from "../../lib/http/node-listener";
import { stampClientAddress } from "../../lib/realtime/web-node";

/**
 * Serves the API's real router (lib/api/v1/routes.ts) as server.ts does, over real HTTP
 * without Next's build, so tests can run worker processes against it (decision 016).
 */
export async function startApiServer(): Promise<{
  url: string;
  server: Server;
  close: () => Promise<void>;
}> {
  const handleApi = createNodeListener(createApi());
  const server = createHttpServer((request, response) => {
    stampClientAddress(request);
    void handleApi(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
