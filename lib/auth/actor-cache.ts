import type { Db } from "../db";
import { runAfterCommit } from "../transaction";

/**
 * Bearer token or session cookie → caller, remembered per web node (decisions 027 and 044).
 * Resolving one is a database round trip (a cookie, two) on every call; the answer changes only
 * when a token is revoked or replaced, a session ends, an agent's incarnation changes, or a user is
 * disabled or re-roled, and each of those evicts here: at once on the node that made the change
 * (`evictActorsAfterCommit`) and, through PostgreSQL NOTIFY, on every other node
 * (lib/auth/actor-evictions.ts).
 *
 * Fail closed: the cache answers only while this node's eviction listener is connected. Until it
 * connects, and from the moment it drops, every call resolves from the database.
 */

/**
 * What an entry is evicted by: `agent:<id>`, `token:<id>`, `user:<id>`, `session:<id>`; `rules:all`
 * for the gate's rule cache (lib/rules/rule-cache.ts), which is this class with one entry and the
 * same listener.
 */
export type ActorTag = `${"agent" | "token" | "user" | "session" | "rules"}:${string}`;

type Entry<V> = { value: V; tags: readonly ActorTag[]; expiresAt: number };

export type ActorCacheOptions = { maxEntries?: number; ttlMs?: number; now?: () => number };

/** How long one entry may answer; see `ActorCache.set`. */
export type EntryLife = { validUntil?: number; ttlMs?: number };

/** The lease a lookup takes before reading the database; a fill with a stale lease is dropped. */
export type FillLease = number;

export class ActorCache<V> {
  readonly maxEntries: number;
  readonly ttlMs: number;
  private readonly now: () => number;
  // Map order is use order: the first key is the least recently used.
  private readonly entries = new Map<string, Entry<V>>();
  private readonly keysByTag = new Map<ActorTag, Set<string>>();
  // Bumped by every eviction and flush. A lookup that read the database before an eviction may
  // have read the old row; it must not put that answer back after the eviction removed it.
  private epoch = 0;
  private isListening = false;
  // Until when the listener is known to have delivered every eviction committed so far.
  private provenUntil = 0;

  constructor(options: ActorCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    // A backstop only: eviction is by notification. It also bounds how stale `lastUsedAt` gets.
    this.ttlMs = options.ttlMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  get isEnabled(): boolean {
    return this.isListening;
  }

  get(key: string): V | undefined {
    if (!this.isListening || this.now() > this.provenUntil) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  lease(): FillLease {
    return this.epoch;
  }

  /**
   * `validUntil`: when the value stops being true whatever happens (a session's expiry). `ttlMs`:
   * this entry's backstop instead of the cache's, for a value nothing else ages (decision 062).
   */
  set(
    key: string,
    value: V,
    tags: readonly ActorTag[],
    lease: FillLease,
    { validUntil = Number.POSITIVE_INFINITY, ttlMs = this.ttlMs }: EntryLife = {},
  ): void {
    if (!this.isListening || lease !== this.epoch) return;
    this.remove(key);
    this.entries.set(key, {
      value,
      tags,
      expiresAt: Math.min(this.now() + ttlMs, validUntil),
    });
    for (const tag of tags) {
      let keys = this.keysByTag.get(tag);
      if (!keys) this.keysByTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
    }
  }

  evict(tags: readonly ActorTag[]): void {
    this.epoch += 1;
    for (const tag of tags) {
      for (const key of this.keysByTag.get(tag) ?? []) this.remove(key);
    }
  }

  /** The eviction listener connected: notifications reach this node again. */
  enable(): void {
    this.flush();
    this.isListening = true;
  }

  /**
   * A round trip sent on the listener's connection at `sentAt` came back. PostgreSQL delivers a
   * notification before the answer to any later query on that connection, so every eviction
   * committed before `sentAt` has been applied; entries may answer for `windowMs` after it and
   * not longer, however the connection fails (even silently).
   */
  markDelivered(sentAt: number, windowMs: number): void {
    this.provenUntil = Math.max(this.provenUntil, sentAt + windowMs);
  }

  /** Notifications may be lost from now on: forget everything and stop answering. */
  disable(): void {
    this.isListening = false;
    this.flush();
  }

  flush(): void {
    this.epoch += 1;
    this.entries.clear();
    this.keysByTag.clear();
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    for (const tag of entry.tags) {
      const keys = this.keysByTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.keysByTag.delete(tag);
    }
  }
}

// server.ts (run by tsx) and Next's bundled code load modules separately; one cache per process.
const holder = globalThis as typeof globalThis & { handshakeActorCache?: ActorCache<unknown> };

/** This process's cache; the eviction listener (started with the web node) enables it. */
export function getActorCache<V>(): ActorCache<V> {
  holder.handshakeActorCache ??= new ActorCache();
  return holder.handshakeActorCache as ActorCache<V>;
}

/**
 * Forgets the callers tagged with `tags` on this node once `db`'s transaction commits; other nodes
 * hear it from the database triggers of migration 014. Every code path that revokes a token, ends
 * an incarnation or changes a user's standing calls this, so the next call on this node is refused.
 */
export function evictActorsAfterCommit(db: Db, tags: readonly ActorTag[]): void {
  runAfterCommit(db, () => getActorCache().evict(tags));
}
