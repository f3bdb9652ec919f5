import type pg from "pg";
import type { Db } from "../db";
import { openListenClient } from "../listen";
import {
  findNewestEventId,
  GAP_WAIT_MS,
  listCommittedEventsAfter,
  listCommittedEventsAfterOn,
  MAX_EVENTS_PAGE,
} from "../events/data";
import type { ConsoleEvent } from "../shared/realtime/contract";
import type { EventHub } from "./event-hub";
import { parseEventNotification, readEventNotifyKey } from "./event-notification";

/** The channel the events insert trigger notifies (prisma/migrations/001_initial.sql). */
const CHANNEL = "handshake_events";
/** Names the listener's backend in pg_stat_activity, so operators and tests can find it. */
export const LISTENER_APPLICATION_NAME = "handshake-listener";

const MAX_RECONNECT_DELAY_MS = 2_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** Bounds every query on the listener, LISTEN included: a slower answer means a dead connection. */
const HEALTH_CHECK_TIMEOUT_MS = 3_000;
/**
 * How long a signed event whose notification came before those of the ids below it is held for
 * them before the table is read. Concurrent commits notify out of id order all the time, and the
 * missing ids' own signed notifications follow within a millisecond or two: a read for each
 * reordering would cost a query and a round trip. A missing id that does not come (a rolled-back
 * transaction) is left to the read and its gap wait, which this delays by as much; an id sent
 * alone (too large to sign) asks for the read at once.
 */
const HOLD_MS = 50;
/** Held events at most: beyond, notifications ask for the read, as before holding. */
const MAX_HELD_EVENTS = MAX_EVENTS_PAGE;

export type EventBridgeOptions = {
  databaseUrl: string;
  db: Db;
  hub: EventHub;
  /** Backstop catch-up for notifications lost while the listener was down. */
  pollIntervalMs?: number;
  healthCheckIntervalMs?: number;
  /** First reconnect delay; doubles per failed attempt up to 2 s. */
  reconnectDelayMs?: number;
  /**
   * Names the listener's backend in pg_stat_activity; LISTENER_APPLICATION_NAME unless given.
   * Bridges that share a database under other names can each find their own.
   */
  applicationName?: string;
};

export type EventBridge = {
  stop(): Promise<void>;
  /** The newest id published to the hub (or skipped as a permanent gap). */
  readonly lastId: number;
  isListening(): boolean;
};

/**
 * Feeds the hub with committed events, in id order, each once. A notification that carries the
 * next id after the cursor, signed by the insert trigger, is published as it arrives (decision
 * 032); a signed one for a later id is held until the ids before it are published, for at most
 * HOLD_MS; anything else (a gap that outlasts that, an id alone, an unsigned or malformed payload,
 * a reconnect, a read under way) only says "something was committed", and the events are read
 * from the table after the cursor, so a lost, duplicated or forged notification costs nothing but
 * latency.
 */
export async function startEventBridge(options: EventBridgeOptions): Promise<EventBridge> {
  const { databaseUrl, db, hub } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 2_000;
  const healthCheckIntervalMs = options.healthCheckIntervalMs ?? 5_000;
  const reconnectDelayMs = options.reconnectDelayMs ?? 100;
  const applicationName = options.applicationName ?? LISTENER_APPLICATION_NAME;

  // History is not replayed into the hub: consoles catch up with `resume`. An event whose
  // transaction is open now is above this id, and is published when it commits, with those
  // committed after it.
  let cursor = await findNewestEventId(db);
  let listener: pg.Client | undefined;
  let notifyKey: Buffer | undefined;
  let isStopped = false;

  // One catch-up at a time; requests arriving meanwhile collapse into a single rerun.
  let catchUpRun: Promise<void> | undefined;
  let isCatchUpRequested = false;
  let isCatchUpFailing = false;
  // Each read that revealed a newer id, oldest first: a missing id below `upTo` has been missing
  // since at least `seenAt`, and is waited on for GAP_WAIT_MS from then; an event whose
  // transaction outlasts that is never published live (consoles get it from a resume below it).
  // Entries at or below the cursor are dropped.
  const sightings: { upTo: number; seenAt: number }[] = [];
  // The newest id a signed notification named: committed, so an id below it that a read finds
  // missing has been missing since then at the latest, though beyond the read's page.
  let newestNotifiedId = 0;
  let gapTimer: NodeJS.Timeout | undefined;
  // Signed events whose notification came before that of an id below them, by id.
  const held = new Map<number, ConsoleEvent>();
  let holdTimer: NodeJS.Timeout | undefined;

  let reconnectTimer: NodeJS.Timeout | undefined;
  let reconnectRun: Promise<void> | undefined;
  let failedReconnects = 0;
  let isCheckingHealth = false;

  async function catchUp(): Promise<void> {
    for (;;) {
      // On the LISTEN connection while there is one; through the pool while it is being replaced.
      const events = listener
        ? await listCommittedEventsAfterOn(listener, cursor)
        : await listCommittedEventsAfter(db, cursor);
      const newest = events.at(-1);
      if (isStopped || !newest) return;
      const now = Date.now();
      if (newest.id > (sightings.at(-1)?.upTo ?? 0)) {
        sightings.push({ upTo: newest.id, seenAt: now });
      }

      const ready: ConsoleEvent[] = [];
      let isHeldByGap = false;
      for (const event of events) {
        const expectedId = (ready.at(-1)?.id ?? cursor) + 1;
        if (event.id !== expectedId) {
          const missingSince = sightings.find((sighting) => sighting.upTo > expectedId)?.seenAt;
          const waitedMs = now - (missingSince ?? now);
          if (waitedMs < GAP_WAIT_MS) {
            isHeldByGap = true;
            scheduleGapRecheck(GAP_WAIT_MS - waitedMs);
            break;
          }
        }
        ready.push(event);
      }

      // A gap in each page would otherwise start its wait only once a read reached its page: a
      // wait per 500 events, and a bridge behind for good above that rate.
      if (isHeldByGap && newestNotifiedId > (sightings.at(-1)?.upTo ?? 0)) {
        sightings.push({ upTo: newestNotifiedId, seenAt: now });
      }
      cursor = ready.at(-1)?.id ?? cursor;
      dropHeldUpToCursor();
      while ((sightings[0]?.upTo ?? Infinity) <= cursor) sightings.shift();
      hub.publish(ready);
      if (isHeldByGap || events.length < MAX_EVENTS_PAGE) return;
    }
  }

  function scheduleGapRecheck(delayMs: number): void {
    if (gapTimer) return;
    gapTimer = setTimeout(() => {
      gapTimer = undefined;
      requestCatchUp();
    }, delayMs);
  }

  function requestCatchUp(): void {
    if (isStopped) return;
    if (catchUpRun) {
      isCatchUpRequested = true;
      return;
    }
    catchUpRun = runCatchUps().finally(() => {
      catchUpRun = undefined;
    });
  }

  function onNotification(message: pg.Notification): void {
    const { id, event } = parseEventNotification(message.payload ?? "", notifyKey);
    // Signed only: a forged id far ahead would start the wait of ids not yet taken.
    if (event && event.id > newestNotifiedId) newestNotifiedId = event.id;
    // Published already, or skipped as a permanent gap: nothing left to read for it.
    if (id !== undefined && id <= cursor) return;
    // A read under way or asked for may cover this id too; publishing beside it could reorder.
    if (!event || catchUpRun) return requestCatchUp();
    if (event.id === cursor + 1) return publishNotified(event);
    hold(event);
  }

  function publishNotified(event: ConsoleEvent): void {
    const ready = [event];
    for (let next = held.get(event.id + 1); next; next = held.get(next.id + 1)) ready.push(next);
    cursor = ready.at(-1)?.id ?? cursor;
    dropHeldUpToCursor();
    while ((sightings[0]?.upTo ?? Infinity) <= cursor) sightings.shift();
    hub.publish(ready);
    // A read saw ids beyond this one, held back by the gap it filled: read them now, not at the
    // gap recheck.
    if (sightings.length > 0) requestCatchUp();
  }

  function hold(event: ConsoleEvent): void {
    // Full (the missing ids are late, or reads are failing): the table has this one too.
    if (held.size >= MAX_HELD_EVENTS) return requestCatchUp();
    held.set(event.id, event);
    holdTimer ??= setTimeout(() => {
      holdTimer = undefined;
      if (held.size > 0) requestCatchUp();
    }, HOLD_MS);
  }

  /** What the cursor has passed, published or skipped as a gap, is held no longer. */
  function dropHeldUpToCursor(): void {
    for (const id of held.keys()) if (id <= cursor) held.delete(id);
    if (held.size === 0) {
      clearTimeout(holdTimer);
      holdTimer = undefined;
    }
  }

  async function runCatchUps(): Promise<void> {
    // A commit of n events sends n notifications, which arrive together and are dispatched one
    // after another in one tick. Yielding once lets them all land before the first read, which
    // then covers them, instead of each one after the first asking for a rerun.
    await Promise.resolve();
    do {
      isCatchUpRequested = false;
      try {
        await catchUp();
        isCatchUpFailing = false;
      } catch (error) {
        // The next poll retries; one line per outage, not one per poll.
        if (!isCatchUpFailing) console.error("[events] reading new events failed", error);
        isCatchUpFailing = true;
        return;
      }
    } while (isCatchUpRequested && !isStopped);
  }

  async function connectListener(): Promise<void> {
    const candidate = await openListenClient({
      databaseUrl,
      applicationName,
      channel: CHANNEL,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      queryTimeoutMs: HEALTH_CHECK_TIMEOUT_MS,
      onNotification,
      onDrop: dropListener,
    });
    try {
      notifyKey ??= await readEventNotifyKey(candidate);
    } catch (error) {
      await candidate.end().catch(() => undefined);
      throw error;
    }
    if (isStopped) {
      await candidate.end();
      return;
    }
    listener = candidate;
    // Whatever committed while nobody was listening is only in the table.
    requestCatchUp();
  }

  function dropListener(target: pg.Client, reason: string): void {
    if (target !== listener) return;
    listener = undefined;
    console.warn(`[events] lost the LISTEN connection (${reason}); reconnecting`);
    target.end().catch(() => undefined);
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (isStopped) return;
    const delayMs = Math.min(reconnectDelayMs * 2 ** failedReconnects, MAX_RECONNECT_DELAY_MS);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      reconnectRun = reconnect().finally(() => {
        reconnectRun = undefined;
      });
    }, delayMs);
  }

  async function reconnect(): Promise<void> {
    try {
      await connectListener();
    } catch {
      failedReconnects += 1;
      scheduleReconnect();
      return;
    }
    if (isStopped) return;
    console.log(`[events] LISTEN connection restored after ${failedReconnects + 1} attempt(s)`);
    failedReconnects = 0;
  }

  // A connection can die without an error event (half-open TCP, a proxy dropping it); only a round
  // trip proves the notifications can still arrive.
  async function checkHealth(): Promise<void> {
    const target = listener;
    if (!target || isCheckingHealth) return;
    isCheckingHealth = true;
    try {
      await target.query("SELECT 1");
    } catch (error) {
      dropListener(target, `health check failed: ${(error as Error).message}`);
    } finally {
      isCheckingHealth = false;
    }
  }

  const detachFromHub = hub.attachPublisher({
    isCaughtUp: () =>
      listener !== undefined &&
      !catchUpRun &&
      !isCatchUpFailing &&
      held.size === 0 &&
      sightings.length === 0,
  });
  const pollTimer = setInterval(requestCatchUp, pollIntervalMs);
  const healthTimer = setInterval(() => void checkHealth(), healthCheckIntervalMs);
  try {
    await connectListener();
  } catch (error) {
    console.warn(`[events] could not LISTEN (${(error as Error).message}); retrying`);
    scheduleReconnect();
  }

  return {
    get lastId() {
      return cursor;
    },
    isListening: () => listener !== undefined,
    async stop() {
      if (isStopped) return;
      isStopped = true;
      detachFromHub();
      clearInterval(pollTimer);
      clearInterval(healthTimer);
      clearTimeout(reconnectTimer);
      clearTimeout(gapTimer);
      clearTimeout(holdTimer);
      await reconnectRun;
      await catchUpRun;
      const target = listener;
      listener = undefined;
      await target?.end();
    },
  };
}
