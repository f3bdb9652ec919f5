import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { user as userRoute } from "../../lib/api/v1/users";
import { getActorCache } from "../../lib/auth/actor-cache";
import { getDb } from "../../lib/db";
import { hashToken } from "../../lib/tokens/credentials";
import { callRoute, signedInHuman } from "../route-client";
import { api, createToken, lead, registerAgent, uniqueName } from "./fixtures";

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
    const name = uniqueName("w");
    const registered = await api.registerAgent((await lead()).headers, {
      name,
      role: "worker",
      worker: { model: "scripted", script: "careful-planner" },
    });
    expect(registered.status).toBe(201);
    const old = { authorization: `Bearer ${String(registered.json.token)}` };
    expect((await api.me(old)).status).toBe(200);
    await expectCached(String(registered.json.token));
    expect((await api.workerToken((await lead()).headers, name)).status).toBe(200);
    expect((await api.me(old)).status).toBe(401);
  });
});
