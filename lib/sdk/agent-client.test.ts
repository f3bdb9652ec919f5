import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { HandshakeClient } from "./agent-client";

let close: (() => void) | undefined;
afterEach(() => close?.());

describe("HandshakeClient.ask", () => {
  it("refuses a default that is not an option before sending anything", async () => {
    let hits = 0;
    const server = createServer((_request, response) => {
      hits += 1;
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () => server.close();
    const { port } = server.address() as AddressInfo;
    const client = new HandshakeClient(`http://127.0.0.1:${port}`, "hs_agent_token", {
      maxRetries: 0,
    });
    const asking = client.ask({
      question: "where?",
      options: [{ id: "staging", label: "Staging" }],
      default: "moon",
    });
    await expect(asking).rejects.toBeInstanceOf(ZodError);
    expect(hits).toBe(0);
  });
});
