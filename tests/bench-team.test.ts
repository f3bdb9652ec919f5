import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isAllowedVerdict } from "../bench/gate";
import { measureTeamLoad } from "../bench/team";

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

let stopServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopServer?.();
  stopServer = undefined;
});

/** A local server that records which connection carried which token. */
async function startServer(handle: Handler) {
  const tokensBySocket = new Map<object, Set<string>>();
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    const tokens = tokensBySocket.get(request.socket) ?? new Set<string>();
    tokens.add(request.headers.authorization ?? "");
    tokensBySocket.set(request.socket, tokens);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handle(request, response, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  stopServer = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests: () => requests,
    tokensBySocket,
  };
}

const reply = (response: ServerResponse, body: unknown) => {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
};

describe("the bench's team phase (bench/team.ts)", () => {
  it("sends each agent's calls once a second on a connection of its own, with its own token", async () => {
    const server = await startServer((_, response) => reply(response, { allowed: true }));
    const load = await measureTeamLoad({
      baseUrl: server.baseUrl,
      agents: 5,
      seconds: 2,
      call: { path: "/tool-calls", body: "{}", tokenOf: (agent) => `token-${agent}` },
    });
    expect(server.requests()).toBe(10);
    expect(load.latenciesMs).toHaveLength(10);
    expect(load.answeredPerSecond).toBe(5);
    expect(load.firstCallsMs).toHaveLength(5);
    expect(load.errors).toBe(0);
    expect(server.tokensBySocket.size).toBe(5);
    const tokens = [...server.tokensBySocket.values()].map((set) => [...set]);
    expect(tokens.every((set) => set.length === 1)).toBe(true);
    expect(tokens.flat().sort()).toEqual([0, 1, 2, 3, 4].map((agent) => `Bearer token-${agent}`));
  });

  it("counts an answer that is not the measured path as a failed call, not a sample", async () => {
    const server = await startServer((request, response) =>
      reply(response, { allowed: request.headers.authorization !== "Bearer token-1" }),
    );
    const load = await measureTeamLoad({
      baseUrl: server.baseUrl,
      agents: 3,
      seconds: 2,
      call: {
        path: "/tool-calls",
        body: "{}",
        tokenOf: (agent) => `token-${agent}`,
        isAnswerRight: isAllowedVerdict,
      },
    });
    expect(load.errors).toBe(2);
    expect(load.latenciesMs).toHaveLength(4);
    expect(load.answeredPerSecond).toBe(2);
  });

  it("times a call from its turn, so a server that falls behind shows its queue", async () => {
    // Each answer takes 1.5 s: an agent's second call, due a second after its first, waits for its
    // connection until the first answer (1.5 s in) and is answered 1.5 s later, 2 s after its turn.
    // A closed loop would time it from its sending and read 1.5 s.
    const server = await startServer((_, response) => {
      setTimeout(() => reply(response, { allowed: true }), 1_500);
    });
    const load = await measureTeamLoad({
      baseUrl: server.baseUrl,
      agents: 1,
      seconds: 2,
      call: { path: "/tool-calls", body: "{}" },
    });
    expect(load.latenciesMs).toHaveLength(2);
    // The first call is answered 1.5 s after its turn, the second (queued behind it) 2 s after.
    expect(load.firstCallsMs).toHaveLength(1);
    expect(load.firstCallsMs[0]).toBeLessThan(Math.max(...load.latenciesMs));
    // A timer may fire a millisecond early against performance.now().
    expect(Math.min(...load.latenciesMs)).toBeGreaterThanOrEqual(1_490);
    expect(Math.max(...load.latenciesMs)).toBeGreaterThanOrEqual(1_990);
  });
});
