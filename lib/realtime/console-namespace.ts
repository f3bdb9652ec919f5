import type { Server, Socket } from "socket.io";
import { readKeyedSession, type HumanActor } from "../auth/actor";
import { SESSION_KEY_HEADER } from "../shared/auth/session-key";
import type { Db } from "../db";
import { databaseNowMs } from "../database-clock";
import { findNewestEventId, listEventsAfter } from "../events/data";
import { isConsoleOriginAllowed } from "./console-origin";
import {
  CONSOLE_NAMESPACE,
  CONSOLE_PROTOCOL_VERSION,
  resumeSchema,
  viewingSchema,
  type ClientToServerEvents,
  type ConsoleEvent,
  type ServerToClientEvents,
} from "../shared/realtime/contract";
import type { EventHub } from "./event-hub";
import { MAX_VIEWING_CHANGES_PER_10S, type Presence } from "./presence";
import { mayReceiveRequestRows, readRequestRow, requestRowCarriedBy } from "./request-rows";

type SocketData = { actor: HumanActor; sessionId: string; feed: ConsoleFeed };
export type ConsoleServer = Server<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  SocketData
>;
type ConsoleSocket = Socket<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  SocketData
>;

/**
 * The most events one resume replays. A console further behind than this is told to refetch
 * instead (`resumed.isTruncated`): its queries are the state, the events only say what changed.
 */
export const MAX_REPLAY_EVENTS = 10_000;
/** The backstop for ended sessions, disabled users and role changes no event announced. */
export const SESSION_RECHECK_MS = 5_000;
const SESSION_EVENT_KINDS = new Set(["user.updated", "session.ended"]);

function headersOf(socket: ConsoleSocket): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(socket.handshake.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  return headers;
}

type Replayed = { lastId: number; isTruncated: boolean };

async function replayEvents(
  db: Db,
  socket: ConsoleSocket,
  after: number,
  maxEvents: number,
): Promise<Replayed> {
  const beyondBound = await db.event.findFirst({
    where: { id: { gt: BigInt(after) } },
    orderBy: { id: "asc" },
    skip: maxEvents,
    select: { id: true },
  });
  if (beyondBound) return { lastId: await findNewestEventId(db), isTruncated: true };
  let cursor = after;
  for (;;) {
    const events = await listEventsAfter(db, cursor);
    for (const event of events) socket.emit("event", event);
    const last = events.at(-1);
    if (!last) break;
    cursor = last.id;
  }
  return { lastId: cursor, isTruncated: false };
}

type ConsoleFeed = {
  /**
   * Takes a live event: true when the socket is to be sent it now (counted as sent), false when
   * the feed holds it for after a replay or has sent it already.
   */
  takeLive(event: ConsoleEvent): boolean;
  resume(after: number): void;
};

/**
 * What one socket is sent. Live events flow from the moment it connects, so a console that has not
 * resumed yet (or never does) still sees new activity; a resume replays everything after `after`
 * that this socket has not been sent since its first replay. A console applies events in id order
 * and drops one below the highest it has seen, so a replay from below an id already sent live is
 * answered as truncated: the console refetches its queries.
 *
 * While a replay runs, live events are held, then released after `resumed` minus the ids the
 * replay already covered. The replay's last read and the hub overlap in time, so nothing falls
 * between them and nothing arrives twice.
 *
 * Resumes are coalesced: one replay runs at a time, the resumes arriving meanwhile become at most
 * one more replay from the lowest cursor asked, and a resume at or above what this socket has
 * already been sent replays nothing. Each resume is still answered by one `resumed`. So twenty
 * resumes cost one replay, not twenty.
 *
 * A replay reads as every reader of the log does (`listEventsAfter`): it stops before an id that
 * may still commit, and what follows comes live once the bridge has passed that id. Like the
 * bridge's, the wait is GAP_WAIT_MS: an event whose transaction stays open longer than that after
 * a later one committed is dropped here as already covered.
 */
function createFeed(db: Db, socket: ConsoleSocket, maxReplayEvents: number): ConsoleFeed {
  let lastSentId = 0;
  // Every event after this id, up to lastSentId, has been sent; unknown until the first replay.
  let coveredAfter: number | undefined;
  let held: ConsoleEvent[] | undefined;
  let lowestAsked: number | undefined;
  let replayingAfter: number | undefined;
  let unansweredResumes = 0;
  let isTruncated = false;
  let isRunning = false;

  function isDue(event: ConsoleEvent): boolean {
    if (event.id <= lastSentId) return false;
    lastSentId = event.id;
    return true;
  }

  function sendLive(event: ConsoleEvent): void {
    if (isDue(event)) socket.emit("event", event);
  }

  async function replay(after: number): Promise<void> {
    const buffer: ConsoleEvent[] = [];
    held = buffer;
    // A console keeps the highest id it has been sent and drops what comes below it: a live event
    // sent before this resume (they flow from the connection on) would make it drop the replay
    // beneath that id, a request created while it was away among them. It refetches instead.
    isTruncated ||= after < lastSentId;
    try {
      const replayed = await replayEvents(db, socket, after, maxReplayEvents);
      lastSentId = Math.max(lastSentId, replayed.lastId);
      coveredAfter = replayed.isTruncated ? replayed.lastId : after;
      isTruncated ||= replayed.isTruncated;
    } catch (error) {
      console.error("[console] resume failed", error);
      socket.emit("error", { code: "INTERNAL", message: "could not replay events; reconnect" });
    } finally {
      held = undefined;
      for (const event of buffer) sendLive(event);
    }
  }

  async function runResumes(): Promise<void> {
    isRunning = true;
    try {
      while (lowestAsked !== undefined) {
        const after = lowestAsked;
        lowestAsked = undefined;
        replayingAfter = after;
        await replay(after);
        replayingAfter = undefined;
      }
      const payload = { lastId: lastSentId, version: CONSOLE_PROTOCOL_VERSION, isTruncated };
      for (; unansweredResumes > 0; unansweredResumes--) socket.emit("resumed", payload);
      isTruncated = false;
    } finally {
      isRunning = false;
    }
  }

  return {
    takeLive(event) {
      if (!held) return isDue(event);
      held.push(event);
      return false;
    },
    resume(after) {
      unansweredResumes += 1;
      // A replay under way covers its cursor onwards too: live events are held until it ends.
      const coveredFrom = Math.min(coveredAfter ?? Infinity, replayingAfter ?? Infinity);
      if (after < coveredFrom) {
        lowestAsked = Math.min(lowestAsked ?? after, after);
      }
      if (!isRunning) void runResumes();
    },
  };
}

/**
 * The socket.io server's own options, for every web node and the tests' console servers: a
 * connection that joins no namespace (refused, or never asking) is dropped after 10 s.
 */
export const CONSOLE_SERVER_OPTIONS = { serveClient: false, connectTimeout: 10_000 } as const;

/**
 * Only signed-in humans on the console's own page join /console: the Origin is checked before the
 * session cookie that rides on the handshake (lib/realtime/console-origin.ts), and the cookie
 * counts only with its session's key.
 */
export function attachConsoleNamespace(
  io: ConsoleServer,
  db: Db,
  options: { maxReplayEvents?: number; presence?: Presence } = {},
): void {
  const maxReplayEvents = options.maxReplayEvents ?? MAX_REPLAY_EVENTS;
  // socket.io's default namespace serves nothing here: its door checked no Origin and no session,
  // so strangers held connections for free. Refused, a connection joins no namespace and the
  // server drops it after `connectTimeout`.
  io.of("/").use((_socket, next) => next(new Error("NOT_FOUND")));
  const namespace = io.of(CONSOLE_NAMESPACE);
  const viewingBudgets: ViewingBudgets = new Map();
  namespace.use((socket, next) => {
    const { origin, host } = socket.handshake.headers;
    if (!isConsoleOriginAllowed(origin, host)) return next(new Error("CROSS_SITE_REQUEST"));
    // In the handshake's auth, which a browser's WebSocket can send, or in the header the API's
    // calls carry, which other clients can (decision 080).
    const key =
      (socket.handshake.auth as { sessionKey?: unknown }).sessionKey ??
      socket.handshake.headers[SESSION_KEY_HEADER];
    readKeyedSession(headersOf(socket), key)
      .then((actor) => {
        if (!actor) return next(new Error("UNAUTHENTICATED"));
        socket.data.actor = actor;
        socket.data.sessionId = actor.sessionId;
        next();
      })
      .catch(() => next(new Error("UNAUTHENTICATED")));
  });
  namespace.on("connection", (socket) => {
    // Same tick as joining namespace.sockets: broadcastHubEvents never meets a socket without one.
    socket.data.feed = createFeed(db, socket, maxReplayEvents);
    socket.emit("clock", { now: databaseNowMs() });
    socket.on("resume", (payload: unknown) => {
      const parsed = resumeSchema.safeParse(payload);
      if (!parsed.success) {
        socket.emit("error", {
          code: "INVALID_INPUT",
          message: "resume expects {after: <event id>}",
        });
        return;
      }
      socket.data.feed.resume(parsed.data.after);
    });
    const { presence } = options;
    if (presence) trackViewing(socket, presence, viewingBudgets);
  });
}

/** Card changes per person on this node: opening more sockets buys no bigger budget. */
type ViewingBudgets = Map<string, { windowStart: number; changes: number }>;

/**
 * The card a socket shows, as its person (from the session, never the message). Bounded: one card
 * per socket, and a burst of changes past MAX_VIEWING_CHANGES_PER_10S by one person, over all of
 * their sockets, is refused, so a client cannot turn the shared channel into a flood.
 */
function trackViewing(socket: ConsoleSocket, presence: Presence, budgets: ViewingBudgets): void {
  const viewer = { userId: socket.data.actor.userId, email: socket.data.actor.email };
  socket.on("viewing", (payload: unknown) => {
    const parsed = viewingSchema.safeParse(payload);
    if (!parsed.success) {
      socket.emit("error", {
        code: "INVALID_INPUT",
        message: "viewing expects {requestId: <request id> | null}",
      });
      return;
    }
    const budget = budgets.get(viewer.userId) ?? { windowStart: Date.now(), changes: 0 };
    budgets.set(viewer.userId, budget);
    if (Date.now() - budget.windowStart > 10_000) {
      budget.windowStart = Date.now();
      budget.changes = 0;
    }
    budget.changes += 1;
    if (budget.changes > MAX_VIEWING_CHANGES_PER_10S) {
      socket.emit("error", { code: "RATE_LIMITED", message: "too many card changes; slow down" });
      return;
    }
    const { requestId } = parsed.data;
    presence.setViewing(socket.id, viewer, requestId);
    if (requestId) socket.emit("presence", presence.viewersOf(requestId));
  });
  socket.on("disconnect", () => presence.forget(socket.id));
}

function endedBecause(
  socket: ConsoleSocket,
  user: { role: string; disabledAt: Date | null } | undefined,
): string | null {
  if (!user) return "your session ended";
  if (user.disabledAt) return "your account was disabled";
  if (user.role !== socket.data.actor.role) return "your role changed; reload";
  return null;
}

/**
 * Disconnects /console sockets whose session has ended (signed out, expired, deleted), whose user
 * was disabled or whose role changed. Sessions live in PostgreSQL, so every node checks all its
 * sockets in one query: at once when the log announces a sign-out or a user change (the event
 * reaches every node through LISTEN/NOTIFY), and every `intervalMs` for expiry and anything else.
 * Returns the stop.
 */
export function watchConsoleSessions(
  io: ConsoleServer,
  db: Db,
  hub: EventHub,
  intervalMs = SESSION_RECHECK_MS,
): () => void {
  const namespace = io.of(CONSOLE_NAMESPACE);
  let run: Promise<void> | undefined;
  let isRerunRequested = false;

  async function recheck(): Promise<void> {
    const sockets = [...namespace.sockets.values()];
    if (sockets.length === 0) return;
    const rows = await db.session.findMany({
      where: {
        id: { in: [...new Set(sockets.map((socket) => socket.data.sessionId))] },
        expiresAt: { gt: new Date() },
      },
      select: { id: true, user: { select: { role: true, disabledAt: true } } },
    });
    const users = new Map(rows.map((row) => [row.id, row.user]));
    for (const socket of sockets) {
      const reason = endedBecause(socket, users.get(socket.data.sessionId));
      if (!reason) continue;
      socket.emit("error", { code: "SESSION_ENDED", message: reason });
      socket.disconnect();
    }
  }

  function requestRecheck(): void {
    if (run) {
      isRerunRequested = true;
      return;
    }
    run = (async () => {
      do {
        isRerunRequested = false;
        // A failed check is retried by the next event or tick; the sockets stay until then.
        await recheck().catch((error: unknown) => {
          console.error("[console] session re-check failed", error);
        });
      } while (isRerunRequested);
    })().finally(() => {
      run = undefined;
    });
  }

  const timer = setInterval(requestRecheck, intervalMs);
  const unsubscribe = hub.subscribe((event) => {
    if (SESSION_EVENT_KINDS.has(event.kind)) requestRecheck();
  });
  return () => {
    clearInterval(timer);
    unsubscribe();
  };
}

/**
 * Sends every event the hub publishes to every /console socket whose feed takes it (see
 * createFeed). One broadcast, encoded and framed once for all of them, instead of an emit per
 * socket (decision 032); the sockets whose feed holds the event or has sent it are left out of
 * it. A new request's event goes to the sockets that may receive its row (lib/realtime/
 * request-rows.ts, decision 035) in a second broadcast, flagged `rowFollows`, and the row follows
 * them once read, once per event, after the event went out: no event waits for a read. Local:
 * every node's own bridge feeds its own sockets. Call after attachConsoleNamespace; returns the
 * unsubscribe.
 */
export function broadcastHubEvents(io: ConsoleServer, hub: EventHub, db: Db): () => void {
  const namespace = io.of(CONSOLE_NAMESPACE);
  return hub.subscribe((event) => {
    const requestId = requestRowCarriedBy(event);
    const leftOut: string[] = [];
    const awaiting: string[] = [];
    for (const socket of namespace.sockets.values()) {
      if (!socket.data.feed.takeLive(event)) {
        leftOut.push(socket.id);
      } else if (requestId !== null && mayReceiveRequestRows(socket.data.actor)) {
        leftOut.push(socket.id);
        awaiting.push(socket.id);
      }
    }
    if (leftOut.length < namespace.sockets.size) {
      namespace.local.except(leftOut).emit("event", event);
    }
    if (requestId === null || awaiting.length === 0) return;
    // A socket is in the room of its own id.
    namespace.local.to(awaiting).emit("event", event, true);
    void readRequestRow(db, requestId).then((row) => {
      namespace.local.to(awaiting).emit("requestRow", { requestId, row: row ?? null });
    });
  });
}
