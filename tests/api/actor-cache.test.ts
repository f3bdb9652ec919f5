import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logout as logoutRoute } from "../../lib/api/v1/auth";
import { user as userRoute } from "../../lib/api/v1/users";
import { sessionCacheKey } from "../../lib/auth/actor";
import { getActorCache } from "../../lib/auth/actor-cache";
import {
  startActorEvictionListener,
  type ActorEvictionListener,
} from "../../lib/auth/actor-evictions";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { hashToken } from "../../lib/tokens/credentials";
import { callRoute, signedInHuman } from "../route-client";
import { api, createToken, lead, registerAgent, registerWorker, uniqueName } from "./fixtures";

// The node that makes a change must refuse the next call at once, before any notification could
// arrive: the cache here is switched on with no eviction listener, so only the code path's own
// eviction can empty it (decision 027). Without it, every call below would answer from the cache.
const cache = getActorCache();

beforeAll(() => {
  cache.enable();
  cache.markDelivered(Date.now(), 3_600_000);
});

afterAll(async () => {
  cache.disable();
  await getDb().$disconnect();
});

async function expectCached(token: string): Promise<void> {
  expect(cache.get(hashToken(token))).toBeDefined();
}

/** A signed-in human whose session cookie the cache now holds. */
async function cachedSession(role: "lead" | "viewer") {
  const human = await signedInHuman(role);
  expect((await api.listRequests(human.headers)).status).toBe(200);
  expect(cache.get(sessionCacheKey(human.cookie))).toBeDefined();
  const { id } = await getDb().user.findUniqueOrThrow({ where: { email: human.email } });
  return { ...human, userId: id };
}

function patchUser(headers: Record<string, string>, id: string, body: unknown) {
  return callRoute(userRoute.PATCH, { method: "PATCH", body, params: { id }, headers });
}

describe("the actor cache on the node that changed something", () => {
  it("refuses a revoked API token on its very next call", async () => {
    const token = await createToken("decide");
    expect((await api.listRequests(token.headers)).status).toBe(200);
    await expectCached(token.token);
    expect((await api.revokeToken((await lead()).headers, token.id)).status).toBe(200);
    const after = await api.listRequests(token.headers);
    expect(after.status).toBe(401);
    expect(after.json.error?.code).toBe("UNAUTHENTICATED");
  });

  it("refuses the token of a user who was just disabled", async () => {
    const owner = await signedInHuman("lead");
    const token = await createToken("decide", owner);
    expect((await api.listRequests(token.headers)).status).toBe(200);
    await expectCached(token.token);
    const { id } = await getDb().user.findUniqueOrThrow({ where: { email: owner.email } });
    expect((await patchUser((await lead()).headers, id, { disabled: true })).status).toBe(200);
    expect((await api.listRequests(token.headers)).status).toBe(401);
  });

  it("acts with the new role of a user who was just downgraded", async () => {
    const owner = await signedInHuman("lead");
    const token = await createToken("admin", owner);
    expect((await api.listAgents(token.headers)).status).toBe(200);
    await expectCached(token.token);
    const { id } = await getDb().user.findUniqueOrThrow({ where: { email: owner.email } });
    expect((await patchUser((await lead()).headers, id, { role: "viewer" })).status).toBe(200);
    const after = await api.registerAgent(token.headers, { name: uniqueName("d"), role: "x" });
    expect([401, 403]).toContain(after.status);
  });

  it("refuses an agent's token once its incarnation ended, and after a respawn", async () => {
    const agent = await registerAgent();
    expect((await api.me(agent.headers)).status).toBe(200);
    await expectCached(agent.token);
    expect((await api.forceStop((await lead()).headers, agent.name)).status).toBe(200);
    expect((await api.me(agent.headers)).status).toBe(401);

    const respawned = await api.respawn((await lead()).headers, agent.name);
    expect(respawned.status).toBe(201);
    const fresh = { authorization: `Bearer ${String(respawned.json.token)}` };
    expect((await api.me(fresh)).json).toMatchObject({ incarnation: 2 });
    await expectCached(String(respawned.json.token));
    expect((await api.me(agent.headers)).status).toBe(401);
    expect((await api.forceStop((await lead()).headers, agent.name)).status).toBe(200);
    expect((await api.me(fresh)).status).toBe(401);
  });

  it("refuses a worker's old token once the supervisor was handed a new one", async () => {
    const worker = await registerWorker();
    expect((await api.me(worker.headers)).status).toBe(200);
    await expectCached(worker.token);
    expect((await api.workerToken((await lead()).headers, worker.name)).status).toBe(200);
    expect((await api.me(worker.headers)).status).toBe(401);
  });
});

describe("session cookies in the actor cache (decision 044)", () => {
  it("refuses a signed-out session cookie on its very next call", async () => {
    const human = await cachedSession("lead");
    const signedOut = await callRoute(logoutRoute.POST, { method: "POST", headers: human.headers });
    expect(signedOut.status).toBe(200);
    const after = await api.listRequests(human.headers);
    expect(after.status).toBe(401);
    expect(after.json.error?.code).toBe("UNAUTHENTICATED");
  });

  it("refuses the session of a user who was just disabled", async () => {
    const human = await cachedSession("lead");
    const disabled = await patchUser((await lead()).headers, human.userId, { disabled: true });
    expect(disabled.status).toBe(200);
    expect((await api.listRequests(human.headers)).status).toBe(401);
  });

  it("acts with the new role of a signed-in user who was just downgraded", async () => {
    const human = await cachedSession("lead");
    const downgraded = await patchUser((await lead()).headers, human.userId, { role: "viewer" });
    expect(downgraded.status).toBe(200);
    const after = await api.registerAgent(human.headers, { name: uniqueName("d"), role: "x" });
    expect(after.status).toBe(403);
  });

  it("remembers a cookie header as a whole: one more cookie is another key, read afresh", async () => {
    const human = await cachedSession("viewer");
    const other = `${human.cookie}; theme=dark`;
    expect(cache.get(sessionCacheKey(other))).toBeUndefined();
    expect((await api.listRequests({ ...human.headers, cookie: other })).status).toBe(200);
    expect(cache.get(sessionCacheKey(other))).toBeDefined();
  });

  it("answers a cached session's mutation from another origin with CROSS_SITE_REQUEST", async () => {
    const human = await cachedSession("lead");
    const name = uniqueName("x");
    const foreign = { ...human.headers, origin: "https://evil.example" };
    const refused = await api.registerAgent(foreign, { name, role: "x" });
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe("CROSS_SITE_REQUEST");
    expect(cache.get(sessionCacheKey(human.cookie))).toBeDefined();
    expect(await getDb().agent.count({ where: { name } })).toBe(0);
  });

  it("remembers no cookie that names no session", async () => {
    const forged = "handshake.session_token=forged.signature";
    expect((await api.listRequests({ cookie: forged })).status).toBe(401);
    expect(cache.get(sessionCacheKey(forged))).toBeUndefined();
  });
});

// Last in the file: the listener takes the cache over, and stopping it switches the cache off.
describe("session cookies ended on another node", () => {
  let listener: ActorEvictionListener | undefined;

  afterAll(async () => {
    await listener?.stop();
  });

  it("refuses a session deleted straight from the table within a second", async () => {
    listener = await startActorEvictionListener({
      databaseUrl: requireDatabaseUrl(),
      cache,
      probeIntervalMs: 50,
    });
    const human = await cachedSession("lead");
    const { count } = await getDb().session.deleteMany({ where: { userId: human.userId } });
    expect(count).toBe(1);
    const started = Date.now();
    for (;;) {
      const sentAt = Date.now();
      const { status } = await api.listRequests(human.headers);
      if (status === 401) {
        expect(sentAt - started).toBeLessThan(1_000);
        break;
      }
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });
});
