import type { Browser, BrowserContext } from "@playwright/test";
import { io, type Socket } from "socket.io-client";
import { z } from "zod";
import { HttpTransport } from "../lib/sdk/transport";
import { SESSION_KEY_STORAGE_NAME } from "../lib/shared/auth/session-key";
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

/** A signed-in Lead's browser: the session cookie (name=value pairs) and its key (decision 080). */
export type BenchSession = { cookie: string; sessionKey: string };

/** Signs in through the real auth route, as the console does. */
export async function signIn(
  baseUrl: string,
  email: string,
  password: string,
): Promise<BenchSession> {
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
  // The baseline's server, from before decision 080, answers no key and asks for none.
  const { sessionKey = "" } = (await response.json()) as { sessionKey?: string };
  return { cookie, sessionKey };
}

/** A Chromium context signed in as `session`, as the console's sign-in page leaves one. */
export async function signedInBrowserContext(
  browser: Browser,
  baseUrl: string,
  session: BenchSession,
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addCookies(
    session.cookie.split("; ").map((pair) => {
      const [name = "", ...value] = pair.split("=");
      return { name, value: value.join("="), url: baseUrl };
    }),
  );
  await context.addInitScript(([name, key]) => window.localStorage.setItem(name, key), [
    SESSION_KEY_STORAGE_NAME,
    session.sessionKey,
  ] as const);
  return context;
}

export type ConsoleClient = {
  socket: Socket<ServerToClientEvents, ClientToServerEvents>;
  /** Called with the receive time (performance.now()) before anything else runs. */
  onEvent: ((event: ConsoleEvent, receivedAt: number) => void) | null;
  close(): void;
};

/**
 * One signed-in console: its own socket.io connection (forceNew, websocket only, as a browser ends
 * up), the session cookie and its key on the handshake, `resume` sent like the console does.
 */
export async function connectConsole(
  baseUrl: string,
  session: BenchSession,
  resumeAfter: number,
): Promise<ConsoleClient> {
  const socket: Socket<ServerToClientEvents, ClientToServerEvents> = io(
    `${baseUrl}${CONSOLE_NAMESPACE}`,
    {
      transports: ["websocket"],
      extraHeaders: { cookie: session.cookie, origin: baseUrl },
      auth: { sessionKey: session.sessionKey },
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
