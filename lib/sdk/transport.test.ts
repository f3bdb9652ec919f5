import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError, UnreachableError } from "./errors";
import { HttpTransport } from "./transport";

const anything = z.unknown();

let close: (() => void) | undefined;
afterEach(() => close?.());

/** A loopback server answering each request with the next scripted status. */
async function serve(statuses: number[]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_request, response) => {
    const status = statuses[Math.min(hits, statuses.length - 1)] ?? 200;
    hits += 1;
    const body =
      status === 200
        ? { ok: true }
        : { error: { code: status === 503 ? "DATABASE_UNAVAILABLE" : "FORBIDDEN", message: "no" } };
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  close = () => server.close();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

describe("HttpTransport", () => {
  it("retries while the server's database is unavailable (503), then returns the answer", async () => {
    const server = await serve([503, 503, 200]);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    expect(await transport.call("GET", "/me", anything)).toEqual({ ok: true });
    expect(server.hits()).toBe(3);
  });

  it("does not retry a refusal: it is an answer", async () => {
    const server = await serve([403, 200]);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    await expect(transport.call("GET", "/me", anything)).rejects.toBeInstanceOf(ApiError);
    expect(server.hits()).toBe(1);
  });

  it("gives up on 503 after its retry budget", async () => {
    const server = await serve([503]);
    const transport = new HttpTransport(server.url, "token-token-token-token", { maxRetries: 2 });
    await expect(transport.call("GET", "/me", anything)).rejects.toMatchObject({
      status: 503,
      code: "DATABASE_UNAVAILABLE",
    });
    expect(server.hits()).toBe(3);
  });

  it("names an unreachable server as such, after its retry budget", async () => {
    const transport = new HttpTransport("http://127.0.0.1:9", "token-token-token-token", {
      maxRetries: 0,
    });
    await expect(transport.call("GET", "/me", anything)).rejects.toBeInstanceOf(UnreachableError);
  });

  it("refuses an answer that does not match the schema it expects", async () => {
    const server = await serve([200]);
    const transport = new HttpTransport(server.url, "token-token-token-token");
    await expect(transport.call("GET", "/me", z.object({ id: z.string() }))).rejects.toMatchObject({
      code: "INVALID_RESPONSE",
    });
  });
});
