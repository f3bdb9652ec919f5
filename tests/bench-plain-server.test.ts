import { createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { measurePlainLongPolls, startPlainServer, type PlainServer } from "../bench/gate";
import { freePort } from "./support/api-node";

const databaseUrl = () => process.env.DATABASE_URL as string;

const servers: PlainServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

describe("the plain node:http floor (bench/plain-server.ts)", () => {
  it("holds a long-poll for its wait and answers an empty inbox at the cursor", async () => {
    const server = await startPlainServer({ databaseUrl: databaseUrl(), port: await freePort() });
    servers.push(server);
    const sentAt = Date.now();
    const response = await fetch(`${server.url}/api/v1/inbox?after=7&wait=1`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ messages: [], cursor: 7 });
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(900);
  });

  it("refuses a port another server answers on, rather than measure that one", async () => {
    const other = createServer((_request, response) => response.end("{}"));
    const port = await freePort();
    await new Promise<void>((resolve) => other.listen(port, "127.0.0.1", resolve));
    try {
      await expect(startPlainServer({ databaseUrl: databaseUrl(), port })).rejects.toThrow(
        `127.0.0.1:${port} is already in use`,
      );
    } finally {
      other.close();
    }
  });

  it("collects its garbage and reports its heap and RSS, so its long-polls are measured as Handshake's", async () => {
    const server = await startPlainServer({ databaseUrl: databaseUrl(), port: await freePort() });
    servers.push(server);
    await server.collectGarbage();
    expect(await server.readRssMiB()).toBeGreaterThan(10);
    expect(await server.readHeapUsedMiB()).toBeGreaterThan(1);
  });

  it("measures what each of its open long-polls costs, and stops", async () => {
    const agents = Array.from({ length: 200 }, (_, index) => ({
      name: `floor-${index}`,
      token: "unused",
    }));
    const port = await freePort();
    const floor = await measurePlainLongPolls({
      databaseUrl: databaseUrl(),
      port,
      agents,
      afterMessage: 0,
    });
    expect(floor.longPolls).toBe(200);
    expect(Number.isFinite(floor.rssPerLongPollKiB)).toBe(true);
    // A socket, its parser, request and response: a node:http request is never free.
    expect(floor.heapPerLongPollKiB).toBeGreaterThan(1);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 90_000);
});
