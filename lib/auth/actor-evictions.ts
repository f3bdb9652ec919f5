import type pg from "pg";
import { openListenClient } from "../listen";
import type { ActorCache, ActorTag } from "./actor-cache";

/** The channel migrations 014's, 015's and 023's triggers notify; the payload is one `ActorTag`. */
export const ACTOR_EVICTIONS_CHANNEL = "handshake_actor_evictions";
export const EVICTIONS_APPLICATION_NAME = "handshake-actor-evictions";

const TAG = /^(agent|token|user|session|rules):[A-Za-z0-9_-]{1,100}$/;
/** How long after a proven delivery the cache may answer: the cross-node revocation bound. */
const DELIVERY_WINDOW_MS = 1_000;
const PROBE_INTERVAL_MS = 250;
const MAX_RECONNECT_DELAY_MS = 2_000;

export type ActorEvictionListener = { stop(): Promise<void>; isListening(): boolean };

/**
 * Keeps this node's actor cache in step with every other node's changes (decision 027). The cache
 * answers only while this listener is connected and has proven, within the last second, that
 * notifications still arrive; anything else flushes it or lets it lapse.
 */
export async function startActorEvictionListener(options: {
  databaseUrl: string;
  cache: ActorCache<unknown>;
  /** Other caches kept honest by the same notifications and the same proof (the rule cache). */
  alsoCaches?: readonly ActorCache<unknown>[];
  probeIntervalMs?: number;
  /** Names the listener's backend in pg_stat_activity; EVICTIONS_APPLICATION_NAME unless given. */
  applicationName?: string;
}): Promise<ActorEvictionListener> {
  const { databaseUrl } = options;
  const caches = [options.cache, ...(options.alsoCaches ?? [])];
  // Every cache sees every tag: a tag names what changed, and each cache holds only its own tags.
  const cache = {
    evict: (tags: readonly ActorTag[]) => caches.forEach((each) => each.evict(tags)),
    flush: () => caches.forEach((each) => each.flush()),
    enable: () => caches.forEach((each) => each.enable()),
    disable: () => caches.forEach((each) => each.disable()),
    markDelivered: (sentAt: number, windowMs: number) =>
      caches.forEach((each) => each.markDelivered(sentAt, windowMs)),
  };
  const probeIntervalMs = options.probeIntervalMs ?? PROBE_INTERVAL_MS;
  let listener: pg.Client | undefined;
  let isStopped = false;
  let isProbing = false;
  let failedReconnects = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;

  function onNotification(message: pg.Notification): void {
    const payload = message.payload ?? "";
    // Not a tag this version knows: forgetting everything is always safe.
    if (TAG.test(payload)) cache.evict([payload as ActorTag]);
    else cache.flush();
  }

  function drop(target: pg.Client, reason: string): void {
    if (target !== listener) return;
    listener = undefined;
    cache.disable();
    console.warn(`[auth] lost the actor-eviction listener (${reason}); cache off until it is back`);
    target.end().catch(() => undefined);
    scheduleReconnect();
  }

  async function connect(): Promise<void> {
    const candidate = await openListenClient({
      databaseUrl,
      applicationName: options.applicationName ?? EVICTIONS_APPLICATION_NAME,
      channel: ACTOR_EVICTIONS_CHANNEL,
      connectTimeoutMs: 5_000,
      queryTimeoutMs: DELIVERY_WINDOW_MS,
      onNotification,
      onDrop: drop,
    });
    if (isStopped) {
      await candidate.end();
      return;
    }
    listener = candidate;
    // Whatever was cached before this LISTEN may have missed an eviction: start empty.
    cache.enable();
    await probe();
  }

  function scheduleReconnect(): void {
    if (isStopped) return;
    const delayMs = Math.min(100 * 2 ** failedReconnects, MAX_RECONNECT_DELAY_MS);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect().then(
        () => {
          failedReconnects = 0;
        },
        () => {
          failedReconnects += 1;
          scheduleReconnect();
        },
      );
    }, delayMs);
  }

  async function probe(): Promise<void> {
    const target = listener;
    if (!target || isProbing) return;
    isProbing = true;
    const sentAt = Date.now();
    try {
      await target.query("SELECT 1");
      if (target === listener) cache.markDelivered(sentAt, DELIVERY_WINDOW_MS);
    } catch (error) {
      drop(target, `probe failed: ${(error as Error).message}`);
    } finally {
      isProbing = false;
    }
  }

  const probeTimer = setInterval(() => void probe(), probeIntervalMs);
  probeTimer.unref();
  try {
    await connect();
  } catch (error) {
    console.warn(`[auth] could not LISTEN for actor evictions (${(error as Error).message})`);
    scheduleReconnect();
  }

  return {
    isListening: () => listener !== undefined,
    async stop() {
      isStopped = true;
      clearInterval(probeTimer);
      clearTimeout(reconnectTimer);
      cache.disable();
      const target = listener;
      listener = undefined;
      await target?.end().catch(() => undefined);
    },
  };
}
