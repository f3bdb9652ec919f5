import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { signedInHuman } from "../route-client";
import {
  api,
  createToken,
  lead,
  registerAgent,
  submitPlan,
  uniqueName,
  type TestToken,
} from "./fixtures";

afterAll(() => getDb().$disconnect());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An agent the supervisor could run: registered by the Lead with a `worker` configuration. */
async function registerWorkerAgent(): Promise<{ name: string; token: string }> {
  const name = uniqueName("w");
  const response = await api.registerAgent((await lead()).headers, {
    name,
    role: "worker",
    prompt: "stored prompt",
    requirePlan: true,
    worker: { model: "scripted", script: "careful-planner" },
  });
  expect(response.status).toBe(201);
  return { name, token: String(response.json.token) };
}

async function agentRow(name: string) {
  return getDb().agent.findUniqueOrThrow({ where: { name } });
}

describe("the token API", () => {
  it("creates a token shown once, lists it without the secret, and a revoked token gets 401", async () => {
    const { headers } = await lead();
    const created = await api.createToken(headers, { name: "ci-bot", scope: "decide" });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: "ci-bot", scope: "decide" });
    expect(String(created.json.token)).toMatch(/^hs_lead_[A-Za-z0-9_-]{43}$/);
    const token = String(created.json.token);
    const id = String(created.json.id);

    expect((await api.listRequests(bearer(token))).status).toBe(200);
    const listed = await api.listTokens(headers);
    const item = (listed.json.items as Record<string, unknown>[]).find((row) => row.id === id);
    expect(item).toMatchObject({ name: "ci-bot", scope: "decide", revokedAt: null });
    expect(item?.lastUsedAt).toEqual(expect.any(String));
    expect(JSON.stringify(listed.json)).not.toContain(token);

    const revoked = await api.revokeToken(headers, id);
    expect(revoked.status).toBe(200);
    expect(revoked.json.revokedAt).toEqual(expect.any(String));
    const after = await api.listRequests(bearer(token));
    expect(after.status).toBe(401);
    expect(after.json.error?.code).toBe("UNAUTHENTICATED");
    // Revoking again changes nothing and still answers with the token.
    expect((await api.revokeToken(headers, id)).json.revokedAt).toBe(revoked.json.revokedAt);
  });

  it("tells a header of another form from a token cut short, and both from an unknown one", async () => {
    const messageOf = async (authorization: string) =>
      (await api.me({ authorization })).json.error?.message;
    expect(await messageOf("Token abc")).toBe("Authorization header must be 'Bearer <token>'");
    expect(await messageOf("Bearer hs_lead_bogus")).toMatch(/not a Handshake token.*cut short/);
    expect(await messageOf(`Bearer ${"x".repeat(32)}`)).toBe("unknown or revoked token");
  });

  it("refuses an unknown scope with 400 and creates nothing", async () => {
    const { headers } = await lead();
    const name = uniqueName("bad");
    const response = await api.createToken(headers, { name, scope: "root" });
    expect(response.status).toBe(400);
    expect(response.json.error?.code).toBe("INVALID_INPUT");
    expect(await getDb().apiToken.count({ where: { name } })).toBe(0);
  });

  it.each([
    ["a right-to-left override", "\u202Eci-bot"],
    ["a zero-width space", "ci\u200Bbot"],
    ["a Cyrillic look-alike", "ci-b\u043Et"],
  ])("refuses a name holding %s: it is shown wherever the token decides", async (_what, raw) => {
    // Red team, round ten: a token's name is the one free text in a decision's provenance line.
    const { headers } = await lead();
    const name = `${uniqueName("shown")}-${raw}`;
    const response = await api.createToken(headers, { name, scope: "decide" });
    expect(response.status).toBe(400);
    expect(response.json.error?.code).toBe("INVALID_INPUT");
    expect(await getDb().apiToken.count({ where: { name } })).toBe(0);
  });

  it("writes lastUsedAt at most once a minute, not once per call", async () => {
    const token = await createToken("read");
    await api.listAgents(token.headers);
    const first = await getDb().apiToken.findUniqueOrThrow({ where: { id: token.id } });
    await api.listAgents(token.headers);
    await api.listAgents(token.headers);
    const later = await getDb().apiToken.findUniqueOrThrow({ where: { id: token.id } });
    expect(first.lastUsedAt).not.toBeNull();
    expect(later.lastUsedAt).toEqual(first.lastUsedAt);
  });

  it("lets a viewer hold only read tokens, see only their own, and revoke only their own", async () => {
    const viewer = await signedInHuman("viewer");
    for (const scope of ["admin", "decide", "connect", "supervisor"]) {
      const refused = await api.createToken(viewer.headers, { name: uniqueName("v"), scope });
      expect(refused.status, scope).toBe(403);
      expect(refused.json.error?.code).toBe("SCOPE_ABOVE_ROLE");
    }
    const own = await createToken("read", viewer);
    const leadToken = await createToken("decide");

    const viewerList = (await api.listTokens(viewer.headers)).json.items as { id: string }[];
    expect(viewerList.map((row) => row.id)).toEqual([own.id]);
    const leadList = (await api.listTokens((await lead()).headers)).json.items as { id: string }[];
    expect(leadList.map((row) => row.id)).toEqual(expect.arrayContaining([own.id, leadToken.id]));

    const stranger = await api.revokeToken(viewer.headers, leadToken.id);
    expect(stranger.status).toBe(404);
    expect(stranger.json.error?.code).toBe("TOKEN_NOT_FOUND");
    expect((await api.listAgents(leadToken.headers)).status).toBe(200);
    expect((await api.revokeToken(viewer.headers, own.id)).status).toBe(200);
  });

  it("lets an admin token do what a Lead does with tokens, and no other scope", async () => {
    const admin = await createToken("admin");
    const minted = await api.createToken(admin.headers, { name: uniqueName("m"), scope: "read" });
    expect(minted.status).toBe(201);
    const decide = await createToken("decide");
    const refused = await api.createToken(decide.headers, { name: uniqueName("m"), scope: "read" });
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe("INSUFFICIENT_SCOPE");
    expect(refused.json.error?.message).toContain("'admin'");
  });

  it("refuses a token whose owner was downgraded below its scope", async () => {
    const human = await signedInHuman("lead");
    const token = await createToken("admin", human);
    expect((await api.listAgents(token.headers)).status).toBe(200);
    await getDb().user.update({ where: { email: human.email }, data: { role: "viewer" } });
    const response = await api.listAgents(token.headers);
    expect(response.status).toBe(403);
    expect(response.json.error?.code).toBe("SCOPE_ABOVE_ROLE");
  });

  it("pages the list with nextCursor", async () => {
    const viewer = await signedInHuman("viewer");
    const made: TestToken[] = [];
    for (let index = 0; index < 3; index += 1) made.push(await createToken("read", viewer));
    const first = await api.listTokens(viewer.headers, "?limit=2");
    expect((first.json.items as unknown[]).length).toBe(2);
    const second = await api.listTokens(viewer.headers, `?limit=2&cursor=${first.json.nextCursor}`);
    const ids = [
      ...(first.json.items as { id: string }[]),
      ...(second.json.items as { id: string }[]),
    ];
    expect(ids.map((row) => row.id).sort()).toEqual(made.map((token) => token.id).sort());
    expect(second.json.nextCursor).toBeNull();
  });
});

describe("the supervisor's token", () => {
  it("gets 403 on deciding, minting tokens or users, and registering a new agent; nothing changes", async () => {
    const supervisor = await createToken("supervisor");
    const agent = await registerAgent({ requirePlan: true });
    const planId = String((await submitPlan(agent)).json.id);

    const decided = await api.respond(supervisor.headers, planId, {
      type: "plan_approval_response",
      approve: true,
    });
    const minted = await api.createToken(supervisor.headers, { name: "escalate", scope: "admin" });
    const email = `${uniqueName("u")}@example.com`;
    const user = await api.createUser(supervisor.headers, {
      email,
      password: "long-enough-pass",
      role: "lead",
    });
    const name = uniqueName("new");
    const registered = await api.registerAgent(supervisor.headers, { name, role: "x" });

    for (const response of [decided, minted, user, registered]) {
      expect(response.status).toBe(403);
      expect(response.json.error?.code).toBe("INSUFFICIENT_SCOPE");
    }
    expect((await api.getRequest((await lead()).headers, planId)).json.status).toBe("pending");
    expect(await getDb().apiToken.count({ where: { name: "escalate" } })).toBe(0);
    expect(await getDb().user.count({ where: { email } })).toBe(0);
    expect(await getDb().agent.count({ where: { name } })).toBe(0);
  });

  it("reads agents and events, issues worker tokens, reports exits and respawns with the stored configuration", async () => {
    const supervisor = await createToken("supervisor");
    const { name } = await registerWorkerAgent();
    expect((await api.listAgents(supervisor.headers)).status).toBe(200);
    expect((await api.events(supervisor.headers, "?order=desc&limit=1")).status).toBe(200);
    const issued = await api.workerToken(supervisor.headers, name);
    expect(issued.status).toBe(200);
    expect((await api.me(bearer(String(issued.json.token)))).status).toBe(200);

    const exit = await api.reportExit(supervisor.headers, name, {
      incarnation: 1,
      exitCode: null,
      signal: "SIGKILL",
    });
    expect(exit.json.status).toBe("crashed");
    const respawned = await api.respawn(supervisor.headers, name);
    expect(respawned.status).toBe(201);
    expect(respawned.json.agent).toMatchObject({
      name,
      incarnation: 2,
      role: "worker",
      prompt: "stored prompt",
      requirePlan: true,
      gate: "required",
      worker: { model: "scripted", script: "careful-planner" },
    });
    expect((await api.me(bearer(String(respawned.json.token)))).json.incarnation).toBe(2);
    expect((await api.me(bearer(String(issued.json.token)))).status).toBe(401);
  });

  it("cannot take over or end an agent it does not run: no worker token, exit or respawn", async () => {
    const supervisor = await createToken("supervisor");
    const agent = await registerAgent();
    const issued = await api.workerToken(supervisor.headers, agent.name);
    expect(issued.status).toBe(409);
    expect(issued.json.error?.code).toBe("AGENT_HAS_NO_WORKER");
    const exit = await api.reportExit(supervisor.headers, agent.name, {
      incarnation: 1,
      exitCode: null,
      signal: "SIGKILL",
    });
    expect(exit.json.error?.code).toBe("AGENT_HAS_NO_WORKER");
    expect((await api.me(agent.headers)).json.status).toBe("starting");

    await api.forceStop((await lead()).headers, agent.name);
    const before = await agentRow(agent.name);
    const respawned = await api.respawn(supervisor.headers, agent.name);
    expect(respawned.json.error?.code).toBe("AGENT_HAS_NO_WORKER");
    const after = await agentRow(agent.name);
    expect(after.incarnation).toBe(before.incarnation);
    expect(after.tokenHash).toBe(before.tokenHash);
  });

  it("cannot respawn an agent that is still running", async () => {
    const supervisor = await createToken("supervisor");
    const { name } = await registerWorkerAgent();
    const response = await api.respawn(supervisor.headers, name);
    expect(response.status).toBe(409);
    expect(response.json.error?.code).toBe("AGENT_EXISTS");
    expect((await agentRow(name)).incarnation).toBe(1);
  });
});

describe("a connect token", () => {
  it("registers agents of its own, receives their tokens and respawns only those the Lead did not stop", async () => {
    const connect = await createToken("connect");
    const name = uniqueName("c");
    const registered = await api.registerAgent(connect.headers, { name, role: "claude code" });
    expect(registered.status).toBe(201);
    expect((await agentRow(name)).ownerTokenId).toBe(connect.id);
    expect((await api.me(bearer(String(registered.json.token)))).json.name).toBe(name);

    // As the sweeper leaves one that went silent: its owner starts it again.
    await getDb().agent.update({ where: { name }, data: { status: "offline" } });
    const respawned = await api.respawn(connect.headers, name);
    expect(respawned.status).toBe(201);
    expect((await api.me(bearer(String(respawned.json.token)))).json.incarnation).toBe(2);
    // One the Lead stopped by force waits for a Lead (round eleven).
    await api.forceStop((await lead()).headers, name);
    const refused = await api.respawn(connect.headers, name);
    expect(refused.json.error?.code).toBe("AGENT_NOT_ACTIVE");
  });

  it("cannot touch an agent it did not register: not by respawn, not by registering over its name", async () => {
    const connect = await createToken("connect");
    const otherConnect = await createToken("connect");
    const leadsAgent = await registerAgent();
    const othersName = uniqueName("o");
    await api.registerAgent(otherConnect.headers, { name: othersName, role: "x" });
    for (const name of [leadsAgent.name, othersName]) {
      await api.forceStop((await lead()).headers, name);
      const before = await agentRow(name);
      const respawned = await api.respawn(connect.headers, name);
      const reregistered = await api.registerAgent(connect.headers, { name, role: "mine now" });
      for (const response of [respawned, reregistered]) {
        expect(response.status).toBe(403);
        expect(response.json.error?.code).toBe("NOT_AGENT_OWNER");
      }
      const after = await agentRow(name);
      expect(after).toMatchObject({ incarnation: before.incarnation, role: before.role });
      expect(after.tokenHash).toBe(before.tokenHash);
    }
  });

  it("cannot spawn a server-side worker, read the team, or decide", async () => {
    const connect = await createToken("connect");
    const name = uniqueName("c");
    const spawned = await api.registerAgent(connect.headers, {
      name,
      role: "x",
      worker: { model: "scripted", script: "careful-planner" },
    });
    expect(spawned.status).toBe(403);
    expect(await getDb().agent.count({ where: { name } })).toBe(0);
    expect((await api.listAgents(connect.headers)).json.error?.code).toBe("INSUFFICIENT_SCOPE");
    const agent = await registerAgent();
    const planId = String((await submitPlan(agent)).json.id);
    const decided = await api.respond(connect.headers, planId, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(decided.status).toBe(403);
  });
});
