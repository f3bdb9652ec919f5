import { describe, expect, it } from "vitest";
import { ActorCache } from "./actor-cache";

function listeningCache(options: { maxEntries?: number; ttlMs?: number } = {}) {
  let now = 1_000;
  const cache = new ActorCache<string>({ ...options, now: () => now });
  cache.enable();
  cache.markDelivered(now, 1_000);
  return {
    cache,
    advance: (ms: number) => {
      now += ms;
      cache.markDelivered(now, 1_000);
    },
    advanceSilently: (ms: number) => {
      now += ms;
    },
  };
}

describe("ActorCache", () => {
  it("answers nothing until its listener is connected, and forgets everything when it drops", () => {
    const cache = new ActorCache<string>();
    cache.set("h", "alice", ["agent:a"], cache.lease());
    expect(cache.get("h")).toBeUndefined();
    cache.enable();
    cache.markDelivered(Date.now(), 60_000);
    cache.set("h", "alice", ["agent:a"], cache.lease());
    expect(cache.get("h")).toBe("alice");
    cache.disable();
    expect(cache.get("h")).toBeUndefined();
    cache.enable();
    expect(cache.get("h")).toBeUndefined();
  });

  it("stops answering once deliveries have not been proven for the window, however the connection failed", () => {
    const { cache, advance, advanceSilently } = listeningCache();
    cache.set("h", "alice", ["agent:a"], cache.lease());
    advance(500);
    expect(cache.get("h")).toBe("alice");
    advanceSilently(1_001);
    expect(cache.get("h")).toBeUndefined();
  });

  it("evicts every entry carrying a tag and keeps the others", () => {
    const { cache } = listeningCache();
    cache.set("t1", "token 1", ["token:1", "user:u"], cache.lease());
    cache.set("t2", "token 2", ["token:2", "user:u"], cache.lease());
    cache.set("a", "agent", ["agent:a"], cache.lease());
    cache.evict(["token:1"]);
    expect(cache.get("t1")).toBeUndefined();
    expect(cache.get("t2")).toBe("token 2");
    cache.evict(["user:u"]);
    expect(cache.get("t2")).toBeUndefined();
    expect(cache.get("a")).toBe("agent");
    expect(cache.size).toBe(1);
  });

  it("drops a fill whose database read started before an eviction", () => {
    const { cache } = listeningCache();
    const lease = cache.lease();
    // The revoking transaction commits and evicts while this lookup still holds the old row.
    cache.evict(["token:1"]);
    cache.set("t1", "revoked token", ["token:1"], lease);
    expect(cache.get("t1")).toBeUndefined();
  });

  it("is bounded: the least recently used entry goes first", () => {
    const { cache } = listeningCache({ maxEntries: 2 });
    cache.set("a", "A", ["agent:a"], cache.lease());
    cache.set("b", "B", ["agent:b"], cache.lease());
    expect(cache.get("a")).toBe("A");
    cache.set("c", "C", ["agent:c"], cache.lease());
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe("A");
    expect(cache.get("c")).toBe("C");
    cache.evict(["agent:b"]);
    expect(cache.size).toBe(2);
  });

  it("expires entries after its TTL", () => {
    const { cache, advance } = listeningCache({ ttlMs: 100 });
    cache.set("a", "A", ["agent:a"], cache.lease());
    advance(99);
    expect(cache.get("a")).toBe("A");
    advance(2);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("keeps an entry given its own TTL past the cache's, and no longer than its own", () => {
    const { cache, advance } = listeningCache({ ttlMs: 100 });
    cache.set("a", "A", ["agent:a"], cache.lease(), { ttlMs: 1_000 });
    cache.set("t", "T", ["token:t"], cache.lease());
    advance(500);
    expect(cache.get("a")).toBe("A");
    expect(cache.get("t")).toBeUndefined();
    advance(501);
    expect(cache.get("a")).toBeUndefined();
  });

  it("never answers past the moment its value stops being true, however long its TTL", () => {
    const { cache, advance } = listeningCache({ ttlMs: 10_000 });
    cache.set("s", "session", ["session:s"], cache.lease(), { validUntil: 1_000 + 300 });
    advance(299);
    expect(cache.get("s")).toBe("session");
    advance(2);
    expect(cache.get("s")).toBeUndefined();
  });
});
