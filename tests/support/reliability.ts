import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { io as connect, type Socket } from "socket.io-client";
import { HandshakeClient } from "../../lib/sdk/agent-client";
import { z } from "zod";
import { ApiError } from "../../lib/sdk/errors";
import { HttpTransport } from "../../lib/sdk/transport";
import type { AgentView } from "../../lib/agents/views";
import { createDb } from "../../lib/db";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import type { MessageView } from "../../lib/messages/views";
import { applyMigrations } from "../../lib/migrations";
import { SESSION_KEY_HEADER } from "../../lib/shared/auth/session-key";
import { CONSOLE_NAMESPACE } from "../../lib/shared/realtime/contract";
import type {
  ClientToServerEvents,
  ConsoleEvent,
  ServerToClientEvents,
} from "../../lib/shared/realtime/contract";
import type { RequestView } from "../../lib/requests/views";
import { createUser } from "../../lib/users/mutations";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

// Shared pieces of tests/reliability/*: a database of the test's own, a Lead over HTTP, console
// sockets and long-polling agents that record what reached them and when, and the figures file.

export const RESULTS_DIR = path.resolve(import.meta.dirname, "../../test-results/reliability");

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function waitUntil<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Writes test-results/reliability/<name>.json, read by scripts/reliability-report.ts. */
export async function writeFigures(name: string, figures: Record<string, unknown>): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(
    path.join(RESULTS_DIR, `${name}.json`),
    `${JSON.stringify({ name, recordedAt: new Date().toISOString(), ...figures }, null, 2)}\n`,
  );
}

/** A migrated database of the test file's own, so no other file's rows or sweepers interfere. */
export async function createOwnDatabase(
  adminUrl: string,
  prefix: string,
): Promise<{ url: string; db: PrismaClient; drop: () => Promise<void> }> {
  const url = await createScratchDatabase(adminUrl, prefix);
  await applyMigrations(url, { isQuiet: true });
  const db = createDb(url);
  return {
    url,
    db,
    drop: async () => {
      await db.$disconnect().catch(() => undefined);
      await dropScratchDatabase(adminUrl, url);
    },
  };
}

export type Human = { email: string; password: string; userId: string };

export async function createHuman(db: PrismaClient, role: "lead" | "viewer"): Promise<Human> {
  const email = `${role}-${randomBytes(4).toString("hex")}@example.com`;
  const password = randomBytes(12).toString("base64url");
  const user = await createUser(db, { email, password, role });
  return { email, password, userId: user.id };
}

/** A browser's session: its Cookie header value and the key its calls carry (decision 080). */
export type BrowserSession = { cookie: string; sessionKey: string };

/** The headers an API call of the session sends. */
export function sessionHeaders(session: BrowserSession): Record<string, string> {
  return { cookie: session.cookie, [SESSION_KEY_HEADER]: session.sessionKey };
}

/** Signs in over HTTP as the console does. */
export async function signIn(baseUrl: string, human: Human): Promise<BrowserSession> {
  const response = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: human.email, password: human.password }),
  });
  if (!response.ok) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  const { sessionKey } = (await response.json()) as { sessionKey: string };
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .join("; ");
  return { cookie, sessionKey };
}

export function isRetryableRefusal(error: unknown): boolean {
  return error instanceof ApiError && error.status === 503;
}

/**
 * Runs an API call, retrying 503 DATABASE_UNAVAILABLE (the documented "retry shortly") until
 * `timeoutMs`. Network errors are already retried inside the agents' HttpTransport.
 */
export async function retrying<T>(
  call: () => Promise<T>,
  onRetry: (error: unknown) => void = () => undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!isRetryableRefusal(error) || Date.now() > deadline) throw error;
      onRetry(error);
      await sleep(200);
    }
  }
}

/** The Lead over HTTP with a Lead API token: what a scripted Lead (or the supervisor) can do. */
export class LeadApi {
  private readonly transport: HttpTransport;

  constructor(
    readonly baseUrl: string,
    token: string,
  ) {
    this.transport = new HttpTransport(baseUrl, token);
  }

  call<T>(method: string, route: string, body?: unknown): Promise<T> {
    return this.transport.call(method, route, z.unknown(), { body }) as Promise<T>;
  }

  registerAgent(body: {
    name: string;
    role: string;
    requirePlan?: boolean;
    worker?: { model: "scripted" | "anthropic"; script?: string };
  }): Promise<{ agent: AgentView; token: string }> {
    return this.call("POST", "/agents", body);
  }

  respond(
    id: string,
    body: { type: string; approve: boolean; feedback?: string },
  ): Promise<RequestView> {
    return this.call("POST", `/requests/${encodeURIComponent(id)}/responses`, body);
  }

  getRequest(id: string): Promise<RequestView> {
    return this.call("GET", `/requests/${encodeURIComponent(id)}`);
  }

  async pendingRequests(): Promise<RequestView[]> {
    const items: RequestView[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: RequestView[]; nextCursor: string | null } = await this.call(
        "GET",
        `/requests?status=pending&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return items;
  }

  requestShutdown(name: string, body: { reason?: string; timeoutSeconds?: number } = {}) {
    return this.call<RequestView>("POST", `/agents/${encodeURIComponent(name)}/shutdown`, body);
  }

  reportExit(name: string, body: { incarnation: number; exitCode: number | null; signal: null }) {
    return this.call<AgentView>("POST", `/agents/${encodeURIComponent(name)}/exit`, body);
  }

  sendMessage(to: string, content: string): Promise<MessageView> {
    return this.call("POST", "/messages", { to, content });
  }
}

export type AgentHandle = { name: string; token: string; client: HandshakeClient };

export async function registerApiAgent(
  lead: LeadApi,
  baseUrl: string,
  name: string,
  options: { requirePlan?: boolean } = {},
): Promise<AgentHandle> {
  const { token } = await lead.registerAgent({ name, role: "reliability", ...options });
  return { name, token, client: new HandshakeClient(baseUrl, token) };
}

type ConsoleSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/**
 * A console as components/realtime builds it: it keeps the newest event id it has seen and sends
 * `resume {after}` on every (re)connect. Records each event id once with its first arrival time.
 */
export class ConsoleRecorder {
  readonly arrivals = new Map<number, { event: ConsoleEvent; at: number }>();
  /** `kind|requestId` → distinct events and the first arrival. */
  private readonly byRequest = new Map<string, { count: number; at: number }>();
  private lastId: number;
  private readonly socket: ConsoleSocket;
  private resumedCount = 0;
  reconnects = 0;

  constructor(
    readonly label: string,
    baseUrl: string,
    session: BrowserSession,
    after: number,
    options: { reconnection?: boolean } = {},
  ) {
    this.lastId = after;
    this.socket = connect(`${baseUrl}${CONSOLE_NAMESPACE}`, {
      transports: ["websocket"],
      // A browser sends its page's origin on the WebSocket handshake; the server checks it.
      extraHeaders: { cookie: session.cookie, origin: baseUrl },
      auth: { sessionKey: session.sessionKey },
      reconnection: options.reconnection ?? true,
      reconnectionDelay: 100,
      reconnectionDelayMax: 1_000,
    });
    this.socket.on("connect", () => {
      if (this.resumedCount > 0) this.reconnects += 1;
      this.socket.emit("resume", { after: this.lastId });
    });
    this.socket.on("resumed", ({ lastId }) => {
      this.resumedCount += 1;
      this.lastId = Math.max(this.lastId, lastId);
    });
    this.socket.on("event", (event) => {
      if (!this.arrivals.has(event.id)) {
        const at = Date.now();
        this.arrivals.set(event.id, { event, at });
        const requestId = "requestId" in event.data ? event.data.requestId : undefined;
        if (requestId) {
          const key = `${event.kind}|${requestId}`;
          const seen = this.byRequest.get(key);
          if (seen) seen.count += 1;
          else this.byRequest.set(key, { count: 1, at });
        }
      }
      this.lastId = Math.max(this.lastId, event.id);
    });
  }

  /** Resolves after the first resume completed (so live events are flowing). */
  ready(timeoutMs = 15_000): Promise<void> {
    return waitUntil(
      `console ${this.label} to resume`,
      () => this.resumedCount > 0,
      timeoutMs,
    ).then(() => undefined);
  }

  isConnected(): boolean {
    return this.socket.connected;
  }

  /** First arrival time of the event of `kind` about `requestId`, if any. */
  arrivalOf(kind: string, requestId: string): number | undefined {
    return this.byRequest.get(`${kind}|${requestId}`)?.at;
  }

  /** Distinct events of `kind` about `requestId` (more than one would be a duplicate). */
  countOf(kind: string, requestId: string): number {
    return this.byRequest.get(`${kind}|${requestId}`)?.count ?? 0;
  }

  close(): void {
    this.socket.disconnect();
  }
}

/**
 * An agent waiting on its inbox with long-polls, as the worker loop does when idle. Records every
 * message once with its arrival time; `onMessage` may act on it (answer a shutdown, …). 503s during a
 * database outage are retried; network errors are retried inside the client.
 */
export class InboxWaiter {
  readonly arrivals = new Map<number, { message: MessageView; at: number }>();
  /** Times one message id arrived (a redelivery would show as > 1). */
  readonly deliveries = new Map<number, number>();
  /** `type|requestId` → distinct messages and the first arrival. */
  private readonly byRequest = new Map<string, { count: number; at: number }>();
  refusals503 = 0;
  errors: unknown[] = [];
  private cursor: number;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    readonly agent: AgentHandle,
    after: number,
    private readonly onMessage: (message: MessageView) => Promise<void> = async () => undefined,
    private readonly waitSeconds = 25,
  ) {
    this.cursor = after;
  }

  start(): this {
    this.loop = this.run();
    return this;
  }

  /** The id of the newest message read so far (where a successor should continue). */
  get position(): number {
    return this.cursor;
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const inbox = await this.agent.client.readInbox(
          { after: this.cursor, waitSeconds: this.waitSeconds },
          this.abort.signal,
        );
        for (const message of inbox.messages) {
          this.deliveries.set(message.id, (this.deliveries.get(message.id) ?? 0) + 1);
          if (!this.arrivals.has(message.id)) {
            const at = Date.now();
            this.arrivals.set(message.id, { message, at });
            if (typeof message.metadata.requestId === "string") {
              const key = `${message.type}|${message.metadata.requestId}`;
              const seen = this.byRequest.get(key);
              if (seen) seen.count += 1;
              else this.byRequest.set(key, { count: 1, at });
            }
            await this.onMessage(message);
          }
        }
        this.cursor = Math.max(this.cursor, inbox.cursor);
      } catch (error) {
        if (this.abort.signal.aborted) return;
        if (isRetryableRefusal(error)) {
          this.refusals503 += 1;
          await sleep(200);
          continue;
        }
        this.errors.push(error);
        await sleep(500);
      }
    }
  }

  /** Arrival time of the first message of `type` carrying `requestId` in its metadata. */
  arrivalOf(type: string, requestId: string): number | undefined {
    return this.byRequest.get(`${type}|${requestId}`)?.at;
  }

  /** Distinct messages of `type` about `requestId` (more than one would be a duplicate). */
  countOf(type: string, requestId: string): number {
    return this.byRequest.get(`${type}|${requestId}`)?.count ?? 0;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }
}

/** Newest event id in the database (consoles resume after it so they replay little). */
export async function newestEventId(db: PrismaClient): Promise<number> {
  const newest = await db.event.aggregate({ _max: { id: true } });
  return Number(newest._max.id ?? 0);
}

/** Events of one kind per request id, straight from the events table. */
export async function eventCountsByRequest(
  db: PrismaClient,
  kind: string,
): Promise<Map<string, number>> {
  const rows = await db.$queryRaw<{ requestId: string; count: bigint }[]>`
    SELECT data->>'requestId' AS "requestId", count(*) AS count FROM events
    WHERE kind = ${kind} GROUP BY 1`;
  return new Map(rows.map((row) => [row.requestId, Number(row.count)]));
}

/**
 * Worker processes (agents/worker.ts) that talk to `serverUrl`, found in /proc independently of the
 * supervisor's own bookkeeping. Empty where /proc is not available.
 */
export function workerProcessesFor(serverUrl: string): number[] {
  if (!existsSync("/proc")) return [];
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes("agents/worker.ts")) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (environ.includes(`HANDSHAKE_URL=${serverUrl}`)) found.push(Number(entry));
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return found;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

export { ApiError };
