import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createToken, lead, uniqueName } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team: a `connect` token "respawns only [its own agents]" and "cannot ask for a server-side
 * worker" (security-scopes draft). Once it registered a name, it keeps `owner_token_id` even after
 * the Lead re-registers that name with a server worker: the connect token can then respawn the
 * Lead's worker agent and receive its agent token.
 */
describe("connect token and a name the Lead took over (red team)", () => {
  it("cannot respawn the Lead's re-registered worker agent or receive its token", async () => {
    const connect = await createToken("connect");
    const { headers } = await lead();
    const name = uniqueName("taken");
    expect((await api.registerAgent(connect.headers, { name, role: "laptop" })).status).toBe(201);
    expect((await api.forceStop(headers, name)).status).toBe(200);

    const mine = await api.registerAgent(headers, {
      name,
      role: "server worker",
      prompt: "the Lead's prompt",
      worker: { model: "scripted", script: "careful-planner" },
    });
    expect(mine.status).toBe(201);
    expect((await api.forceStop(headers, name)).status).toBe(200);

    const respawned = await api.respawn(connect.headers, name);
    // Actually: 201 with a fresh agent token for the Lead's worker agent.
    expect(respawned.json.token).toBeUndefined();
    expect(respawned.status).toBe(403);
  });

  it("cannot take back, through its session, a name the Lead re-registered", async () => {
    // Red team: the session's next connect found the agent by its session key, gave it the
    // session's token (the Lead's stopped working), and the agent, no longer the token's,
    // outlived the token's revocation.
    const connect = await createToken("connect");
    const { headers } = await lead();
    const session = { sessionId: uniqueName("sess"), cwd: "/home/u/proj" };
    const first = await api.connectSession(connect.headers, session);
    const name = String((first.json.agent as { name: string }).name);
    expect((await api.forceStop(headers, name)).status).toBe(200);
    const mine = await api.registerAgent(headers, { name, role: "the Lead's own agent" });
    expect(mine.status).toBe(201);
    const leadsAgent = { authorization: `Bearer ${String(mine.json.token)}` };

    const again = await api.connectSession(connect.headers, session);

    expect(again.status).toBe(201);
    expect((again.json.agent as { name: string }).name).not.toBe(name);
    expect((await api.me(leadsAgent)).status).toBe(200);
    expect((await api.revokeToken(headers, connect.id)).status).toBe(200);
    expect((await api.me(leadsAgent)).status).toBe(200);
    expect((await api.me({ authorization: `Bearer ${String(again.json.token)}` })).status).toBe(
      401,
    );
  });
});
