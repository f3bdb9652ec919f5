import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActorCache } from "../../lib/auth/actor-cache";
import { getDb } from "../../lib/db";
import { hashToken } from "../../lib/tokens/credentials";
import { api, createToken, lead, registerAgent } from "./fixtures";

// This file's calls resolve their callers through a cache on a clock of its own (decision 062):
// the process's cache is swapped for it, as `getActorCache` finds it, and put back afterwards.
const holder = globalThis as typeof globalThis & { handshakeActorCache?: ActorCache<unknown> };
const processCache = holder.handshakeActorCache;
let clock = Date.now();
const cache = new ActorCache<unknown>({ now: () => clock });

function advance(ms: number): void {
  clock += ms;
  // The eviction listener's proof, which a node renews every 250 ms.
  cache.markDelivered(clock, 1_000);
}

beforeAll(() => {
  holder.handshakeActorCache = cache;
  cache.enable();
  advance(0);
});

afterAll(async () => {
  holder.handshakeActorCache = processCache;
  await getDb().$disconnect();
});

describe("how long the actor cache remembers a caller", () => {
  it("keeps an agent past the 10 s backstop, across an idle agent's 30 s long-poll cadence", async () => {
    const agent = await registerAgent();
    expect((await api.me(agent.headers)).status).toBe(200);
    advance(31_000);
    expect(cache.get(hashToken(agent.token))).toMatchObject({ kind: "agent", name: agent.name });
    advance(270_000);
    expect(cache.get(hashToken(agent.token))).toBeUndefined();
  });

  it("still drops a long-remembered agent at once when its incarnation ends", async () => {
    const agent = await registerAgent();
    expect((await api.me(agent.headers)).status).toBe(200);
    advance(200_000);
    expect(cache.get(hashToken(agent.token))).toBeDefined();
    expect((await api.forceStop((await lead()).headers, agent.name)).status).toBe(200);
    expect(cache.get(hashToken(agent.token))).toBeUndefined();
    expect((await api.me(agent.headers)).status).toBe(401);
  });

  it("keeps a human's API token no longer than the backstop, so its lastUsedAt stays fresh", async () => {
    const token = await createToken("read");
    expect((await api.listRequests(token.headers)).status).toBe(200);
    advance(9_000);
    expect(cache.get(hashToken(token.token))).toBeDefined();
    advance(1_001);
    expect(cache.get(hashToken(token.token))).toBeUndefined();
  });
});
