import { createServer, request as httpRequest, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { clientGoneOf, type ClientGone } from "./client-gone";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server that holds its one request open; resolves with the held response and a way to leave. */
async function holdOneRequest(): Promise<{ response: ServerResponse; leave: () => void }> {
  let held!: (response: ServerResponse) => void;
  const arrived = new Promise<ServerResponse>((resolve) => (held = resolve));
  const server = createServer((_request, response) => held(response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = httpRequest({ port: (server.address() as AddressInfo).port, host: "127.0.0.1" });
  client.on("error", () => undefined);
  client.end();
  return { response: await arrived, leave: () => client.destroy() };
}

function listener(): EventListenerObject & { calls: number } {
  return {
    calls: 0,
    handleEvent() {
      this.calls += 1;
    },
  };
}

function closed(gone: ClientGone): Promise<void> {
  return new Promise((resolve) =>
    gone.addEventListener("abort", { handleEvent: () => resolve() }, { once: true }),
  );
}

describe("a waiting request's client gone, heard from its response (lib/http/client-gone.ts)", () => {
  it("tells its listeners once when the client leaves, and reads aborted from then on", async () => {
    const { response, leave } = await holdOneRequest();
    const gone = clientGoneOf(response);
    const told = listener();
    gone.addEventListener("abort", told, { once: true });
    expect(gone.aborted).toBe(false);
    const heard = closed(gone);
    leave();
    await heard;
    expect(told.calls).toBe(1);
    expect(gone.aborted).toBe(true);
  });

  it("does not tell a listener that was removed", async () => {
    const { response, leave } = await holdOneRequest();
    const gone = clientGoneOf(response);
    const removed = listener();
    gone.addEventListener("abort", removed, { once: true });
    gone.removeEventListener("abort", removed);
    const heard = closed(gone);
    leave();
    await heard;
    expect(removed.calls).toBe(0);
  });

  it("reads aborted for a response whose client left before it was asked", async () => {
    const { response, leave } = await holdOneRequest();
    const left = new Promise((resolve) => response.once("close", resolve));
    leave();
    await left;
    expect(clientGoneOf(response).aborted).toBe(true);
  });
});
