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
});
