import { io, type Socket } from "socket.io-client";
import { z } from "zod";
import { HttpTransport } from "../lib/sdk/transport";
import {
  CONSOLE_NAMESPACE,
  type ClientToServerEvents,
  type ConsoleEvent,
  type ServerToClientEvents,
} from "../lib/shared/realtime/contract";
import { withTimeout } from "./raw";

// Long-polls name their wait in the path (`?wait=30`); the answer may take that long.
const CALL_TIMEOUT_MS = 60_000;
const anything = z.unknown();

/** JSON over HTTP exactly as the agents send it: the SDK's transport, bearer token, no retries. */
export async function callApi<T>(
  baseUrl: string,
  auth: { token: string },
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  const transport = new HttpTransport(baseUrl, auth.token, {
    maxRetries: 0,
    timeoutMs: CALL_TIMEOUT_MS,
  });
  return (await transport.call(method, path, anything, { body, signal })) as T;
}

/** Signs in through the real auth route and returns the session cookie (name=value pairs). */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  if (!cookie) throw new Error("sign-in returned no session cookie");
  return cookie;
}

export type ConsoleClient = {
  socket: Socket<ServerToClientEvents, ClientToServerEvents>;
  /** Called with the receive time (performance.now()) before anything else runs. */
  onEvent: ((event: ConsoleEvent, receivedAt: number) => void) | null;
  close(): void;
};

/**
 * One signed-in console: its own socket.io connection (forceNew, websocket only, as a browser ends
 * up), the session cookie on the handshake, `resume` sent like the console does.
 */
export async function connectConsole(
  baseUrl: string,
  cookie: string,
  resumeAfter: number,
): Promise<ConsoleClient> {
  const socket: Socket<ServerToClientEvents, ClientToServerEvents> = io(
    `${baseUrl}${CONSOLE_NAMESPACE}`,
    {
      transports: ["websocket"],
      extraHeaders: { cookie, origin: baseUrl },
      forceNew: true,
      reconnection: false,
      timeout: 10_000,
    },
  );
  const client: ConsoleClient = {
    socket,
    onEvent: null,
    close: () => {
      socket.removeAllListeners();
      socket.disconnect();
    },
  };
  socket.on("event", (event) => {
    const receivedAt = performance.now();
    client.onEvent?.(event, receivedAt);
  });
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("connect_error", reject);
      }),
      15_000,
      "console socket did not connect",
    );
    const resumed = new Promise<void>((resolve) => socket.once("resumed", () => resolve()));
    socket.emit("resume", { after: resumeAfter });
    await withTimeout(resumed, 15_000, "console resume did not finish");
  } catch (error) {
    client.close();
    throw error;
  }
  return client;
}

export type Agent = { name: string; token: string };

/** Registers agents through POST /api/v1/agents with the Lead token, `concurrency` at a time. */
export async function registerAgents(
  baseUrl: string,
  leadToken: string,
  names: string[],
  concurrency: number,
): Promise<Agent[]> {
  const agents: Agent[] = new Array<Agent>(names.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const index = next++;
        const name = names[index];
        if (name === undefined) return;
        const registered = await callApi<{ token: string }>(
          baseUrl,
          { token: leadToken },
          "POST",
          "/agents",
          { name, role: "bench" },
        );
        agents[index] = { name, token: registered.token };
      }
    }),
  );
  return agents;
}

/** Runs `worker` over `items` with `concurrency` workers; returns how many resolved. */
export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  worker: (item: T) => Promise<void>,
): Promise<number> {
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const index = next++;
        if (index >= items.length) return;
        await worker(items[index] as T);
        done += 1;
      }
    }),
  );
  return done;
}
