import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import { databaseNowMs } from "../database-clock";
import { openListenClient } from "../listen";
import { readEventNotifyKey } from "./event-notification";
import type { PresencePayload } from "../shared/realtime/contract";

/**
 * Who has which card open: ephemeral, never an `events` row. Each node knows its own sockets and
 * tells the others through NOTIFY on its own channel (not the events channel, which means "read
 * the log"); a node re-announces what it holds every REANNOUNCE_MS, and forgets another node's
 * viewers it has not heard of for STALE_AFTER_MS, so a node that died takes its viewers with it.
 */
export const PRESENCE_CHANNEL = "handshake_presence";
export const REANNOUNCE_MS = 10_000;
export const STALE_AFTER_MS = 30_000;
/** A console changes cards a few times a second at most (j/k); past this, changes are dropped. */
export const MAX_VIEWING_CHANGES_PER_10S = 50;

export type Viewer = { userId: string; email: string };

const announcementSchema = z.strictObject({
  node: z.string(),
  requestId: z.string(),
  viewers: z.array(z.strictObject({ userId: z.string(), email: z.string() })).max(1_000),
});
type Announcement = z.infer<typeof announcementSchema>;

/** How announcements leave and reach a node: NOTIFY/LISTEN in production, a loop in unit use. */
export type PresenceTransport = {
  publish(payload: string): Promise<void>;
  stop(): Promise<void>;
};

function uniqueByUser(viewers: Iterable<Viewer>): Viewer[] {
  const byUser = new Map<string, Viewer>();
  for (const viewer of viewers) byUser.set(viewer.userId, viewer);
  return [...byUser.values()].sort((a, b) => a.email.localeCompare(b.email));
}

export type Presence = {
  /** A socket of this node shows `requestId` now (null: no card); replaces what it showed. */
  setViewing(socketId: string, viewer: Viewer, requestId: string | null): void;
  /** The socket is gone. */
  forget(socketId: string): void;
  viewersOf(requestId: string): PresencePayload;
  /** An announcement from the channel (this node's own included, which it ignores). */
  receive(payload: string): void;
  stop(): Promise<void>;
};

/**
 * One node's presence. `onChange` runs with a card's merged viewers whenever they change, for the
 * node to send to its consoles.
 */
export function createPresence(options: {
  transport: PresenceTransport;
  onChange: (payload: PresencePayload) => void;
  now?: () => number;
}): Presence {
  const node = randomUUID();
  const now = options.now ?? Date.now;
  const local = new Map<string, { requestId: string; viewer: Viewer }>();
  const remote = new Map<string, { heardAt: number; requests: Map<string, Viewer[]> }>();

  function viewersOf(requestId: string): PresencePayload {
    const here = [...local.values()].filter((entry) => entry.requestId === requestId);
    const there = [...remote.values()]
      .filter((entry) => now() - entry.heardAt < STALE_AFTER_MS)
      .flatMap((entry) => entry.requests.get(requestId) ?? []);
    const viewers = uniqueByUser([...here.map((entry) => entry.viewer), ...there]);
    return { requestId, viewers: viewers.map(({ email }) => ({ email })) };
  }

  function announce(requestId: string): void {
    const viewers = uniqueByUser(
      [...local.values()]
        .filter((entry) => entry.requestId === requestId)
        .map((entry) => entry.viewer),
    );
    const announcement: Announcement = { node, requestId, viewers };
    options.transport.publish(JSON.stringify(announcement)).catch((error: unknown) => {
      // The next re-announcement repairs what this one would have said.
      console.warn("[presence] could not announce", (error as Error).message);
    });
  }

  function changed(requestId: string): void {
    options.onChange(viewersOf(requestId));
    announce(requestId);
  }

  function forgetStaleNodes(): void {
    for (const [other, entry] of remote) {
      if (now() - entry.heardAt < STALE_AFTER_MS) continue;
      remote.delete(other);
      for (const requestId of entry.requests.keys()) options.onChange(viewersOf(requestId));
    }
  }

  const timer = setInterval(() => {
    forgetStaleNodes();
    for (const requestId of new Set([...local.values()].map((entry) => entry.requestId))) {
      announce(requestId);
    }
  }, REANNOUNCE_MS);
  timer.unref();

  return {
    setViewing(socketId, viewer, requestId) {
      const before = local.get(socketId)?.requestId ?? null;
      if (before === requestId) return;
      if (requestId === null) local.delete(socketId);
      else local.set(socketId, { requestId, viewer });
      if (before !== null) changed(before);
      if (requestId !== null) changed(requestId);
    },
    forget(socketId) {
      const before = local.get(socketId);
      if (!before) return;
      local.delete(socketId);
      changed(before.requestId);
    },
    viewersOf,
    receive(payload) {
      let parsed: Announcement;
      try {
        parsed = announcementSchema.parse(JSON.parse(payload));
      } catch {
        return;
      }
      if (parsed.node === node) return;
      const entry = remote.get(parsed.node) ?? { heardAt: now(), requests: new Map() };
      entry.heardAt = now();
      if (parsed.viewers.length === 0) entry.requests.delete(parsed.requestId);
      else entry.requests.set(parsed.requestId, parsed.viewers);
      remote.set(parsed.node, entry);
      options.onChange(viewersOf(parsed.requestId));
    },
    async stop() {
      clearInterval(timer);
      await options.transport.stop();
    },
  };
}

/**
 * Any login to the database may NOTIFY any channel, so announcements are signed with the key the
 * events trigger signs with (readable by the server's role only), under a prefix of their own so
 * that neither signature passes for the other. Unsigned, a login with no table privileges put
 * "cto@example.com (already approving this, leave it)" among a card's viewers.
 */
async function readPresenceKey(pool: pg.Pool): Promise<Buffer> {
  const client = await pool.connect();
  try {
    const key = await readEventNotifyKey(client);
    if (!key) throw new Error("no signing key in handshake_private.event_notify_key");
    return key;
  } finally {
    client.release();
  }
}

/**
 * How old a signed announcement may be when heard. Nodes re-announce every REANNOUNCE_MS; anyone
 * who may LISTEN can record a signed one, and replayed later it would put a viewer back on a card
 * they left.
 */
const ANNOUNCEMENT_LIFETIME_MS = 2 * REANNOUNCE_MS;

function macOf(key: Buffer, sentAt: number, payload: string): Buffer {
  return createHmac("sha256", key).update(`presence\n${sentAt}\n${payload}`).digest();
}

function signAnnouncement(key: Buffer, sentAt: number, payload: string): string {
  return `${macOf(key, sentAt, payload).toString("hex")} ${sentAt} ${payload}`;
}

/** The announcement a signed payload carries, or null for one the key did not sign or too old. */
function openAnnouncement(key: Buffer, signed: string, now: number): string | null {
  const match = /^([0-9a-f]{64}) (\d{1,16}) /.exec(signed);
  if (!match) return null;
  const [prefix, mac = "", sentAtText = ""] = match;
  const sentAt = Number(sentAtText);
  const payload = signed.slice(prefix.length);
  if (!timingSafeEqual(Buffer.from(mac, "hex"), macOf(key, sentAt, payload))) return null;
  return Math.abs(now - sentAt) <= ANNOUNCEMENT_LIFETIME_MS ? payload : null;
}

/** Reconnect delays of the presence listener: doubled per failed attempt, up to the most. */
const RECONNECT_DELAY_MS = 1_000;
const MAX_RECONNECT_DELAY_MS = 10_000;

/**
 * NOTIFY through the pool, LISTEN on a connection of its own that reconnects after a loss, trying
 * until the database answers (what was said meanwhile comes back with the next re-announcement).
 */
export async function startPresenceTransport(
  databaseUrl: string,
  onMessage: (payload: string) => void,
  options: { reconnectDelayMs?: number; now?: () => number } = {},
): Promise<PresenceTransport> {
  const firstDelayMs = options.reconnectDelayMs ?? RECONNECT_DELAY_MS;
  // An announcement's age is judged by another node: both read the database's clock.
  const now = options.now ?? databaseNowMs;
  let listener: pg.Client | null = null;
  let isStopped = false;
  let delayMs = firstDelayMs;
  const publisher = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  publisher.on("error", () => undefined);
  const key = await readPresenceKey(publisher);

  async function connect(): Promise<void> {
    const client = await openListenClient({
      databaseUrl,
      applicationName: "handshake-presence",
      channel: PRESENCE_CHANNEL,
      connectTimeoutMs: 5_000,
      queryTimeoutMs: 5_000,
      onNotification: (message) => {
        const announcement = openAnnouncement(key, message.payload ?? "", now());
        if (announcement !== null) onMessage(announcement);
      },
      onDrop: (dropped) => {
        if (listener !== dropped || isStopped) return;
        listener = null;
        reconnectLater();
      },
    });
    if (isStopped) {
      await client.end();
      return;
    }
    listener = client;
    delayMs = firstDelayMs;
  }

  function reconnectLater(): void {
    setTimeout(() => {
      if (isStopped) return;
      connect().catch((error: unknown) => {
        // A database restarting refuses connections for a while: one refusal must not end it.
        console.error(`[presence] could not listen (${String(error)}); retrying`);
        delayMs = Math.min(delayMs * 2, MAX_RECONNECT_DELAY_MS);
        reconnectLater();
      });
    }, delayMs).unref();
  }
  await connect();

  return {
    async publish(payload) {
      const signed = signAnnouncement(key, now(), payload);
      await publisher.query("SELECT pg_notify($1, $2)", [PRESENCE_CHANNEL, signed]);
    },
    async stop() {
      isStopped = true;
      const client = listener;
      listener = null;
      await client?.end().catch(() => undefined);
      await publisher.end();
    },
  };
}
