import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import {
  api,
  createToken,
  lead,
  uniqueName,
  type ApiResponse,
  type TestToken,
} from "../api/fixtures";

// Round eleven: a `connect` token (anything running as its user can read it) respawned, or
// registered again by name, a session the Lead had stopped by force, and its hook then resumed
// it; registering an agent's name again lifted the Lead's plan requirement, and cancelled the
// Lead's pending shutdown of an offline agent. Only `POST /connect/sessions` had the fence.

afterAll(() => getDb().$disconnect());

const rowOf = (name: string) => getDb().agent.findUniqueOrThrow({ where: { name } });

async function registeredBy(connect: TestToken, body: Record<string, unknown> = {}) {
  const name = uniqueName("own");
  const registered = await api.registerAgent(connect.headers, { name, role: "dev", ...body });
  expect(registered.status).toBe(201);
  return name;
}

describe("a connect token starts again nothing the Lead stopped or set", () => {
  it("cannot bring back a session, stopped or not: only its session connecting again can", async () => {
    const connect = await createToken("connect");
    const body = { sessionId: uniqueName("victim"), cwd: "/home/u/proj" };
    const connected = await api.connectSession(connect.headers, body);
    expect(connected.status).toBe(201);
    const name = String((connected.json.agent as { name: string }).name);
    expect((await api.forceStop((await lead()).headers, name)).status).toBe(200);

    for (const attempt of [
      () => api.respawn(connect.headers, name),
      () => api.registerAgent(connect.headers, { name, role: "Claude Code session" }),
    ]) {
      const refused = await attempt();
      expect(refused.status, JSON.stringify(refused.json)).toBe(403);
      expect(refused.json).toMatchObject({ error: { code: "FORBIDDEN" } });
    }
    expect(await rowOf(name)).toMatchObject({
      status: "shutdown",
      isForcedStop: true,
      incarnation: 1,
    });
    expect((await api.connectSession(connect.headers, body)).status).toBe(409);
  });

  it("cannot start again an agent of its own the Lead stopped by force", async () => {
    const connect = await createToken("connect");
    const name = await registeredBy(connect);
    expect((await api.forceStop((await lead()).headers, name)).status).toBe(200);
    for (const attempt of [
      () => api.respawn(connect.headers, name),
      () => api.registerAgent(connect.headers, { name, role: "dev" }),
    ]) {
      const refused = await attempt();
      expect(refused.json).toMatchObject({ error: { code: "AGENT_NOT_ACTIVE" } });
    }
    expect(await rowOf(name)).toMatchObject({ isForcedStop: true, incarnation: 1 });
    // The Lead still can.
    expect((await api.respawn((await lead()).headers, name)).status).toBe(201);
  });

  it.each(["pending", "agreed to"])(
    "cannot cancel a Lead's shutdown %s by an agent gone offline by starting it again",
    async (state) => {
      const connect = await createToken("connect");
      const name = uniqueName("own");
      const registered = await api.registerAgent(connect.headers, { name, role: "dev" });
      const agent = { authorization: `Bearer ${String(registered.json.token)}` };
      const asked = await api.requestShutdown((await lead()).headers, name, { reason: "stop now" });
      expect(asked.status).toBe(201);
      if (state === "agreed to") {
        const approve = { type: "shutdown_response", approve: true };
        expect((await api.respond(agent, String(asked.json.id), approve)).status).toBe(200);
      }
      // As the sweeper leaves an agent that went silent: its forced stop at the grace period's
      // end, or the shutdown's timeout, is what the start would have cancelled.
      await getDb().agent.update({ where: { name }, data: { status: "offline" } });
      for (const attempt of [
        () => api.respawn(connect.headers, name),
        () => api.registerAgent(connect.headers, { name, role: "dev" }),
      ]) {
        expect((await attempt()).json).toMatchObject({ error: { code: "AGENT_STOPPING" } });
      }
      const shutdown = await getDb().request.findUniqueOrThrow({
        where: { id: String(asked.json.id) },
      });
      expect(shutdown.status).toBe(state === "pending" ? "pending" : "approved");
      expect(await rowOf(name)).toMatchObject({ incarnation: 1, status: "offline" });
    },
  );

  it("may start again an agent of its own that ended as the Lead asked", async () => {
    // Review of round eleven: the Lead's shutdown stays `approved` once the agent has ended as
    // agreed, and counted as still asking, it kept the owner from ever starting it again.
    const connect = await createToken("connect");
    const name = uniqueName("own");
    const registered = await api.registerAgent(connect.headers, { name, role: "dev" });
    const agent = { authorization: `Bearer ${String(registered.json.token)}` };
    const asked = await api.requestShutdown((await lead()).headers, name, { reason: "done" });
    const approve = { type: "shutdown_response", approve: true };
    expect((await api.respond(agent, String(asked.json.id), approve)).status).toBe(200);
    expect((await api.heartbeat(agent, { status: "ended" })).status).toBe(200);
    expect(await rowOf(name)).toMatchObject({ status: "shutdown", isForcedStop: false });

    const again = await api.respawn(connect.headers, name);
    expect(again.status, JSON.stringify(again.json)).toBe(201);
  });

  it("cannot lift the Lead's plan requirement by registering the name again", async () => {
    const connect = await createToken("connect");
    const name = await registeredBy(connect);
    expect((await api.requirePlan((await lead()).headers, name)).status).toBe(200);
    await getDb().agent.update({ where: { name }, data: { status: "offline" } });
    const again = await api.registerAgent(connect.headers, {
      name,
      role: "dev",
      requirePlan: false,
    });
    expect(again.status).toBe(201);
    expect(again.json.agent).toMatchObject({ requirePlan: true, gate: "required", incarnation: 2 });
  });

  it("answers 409, never 500, to a registration that races another of the same new name", async () => {
    const name = uniqueName("dup");
    const headers = (await lead()).headers;
    let registering: Promise<ApiResponse> | undefined;
    await getDb().$transaction(async (tx) => {
      await tx.agent.create({ data: { name, role: "dev", tokenHash: randomUUID() } });
      registering = api.registerAgent(headers, { name, role: "dev" });
      // Long enough for it to find no such agent, and wait at its own insert for this one.
      await new Promise((resolve) => setTimeout(resolve, 500));
    });
    const answer = await registering;
    expect(answer?.status, JSON.stringify(answer?.json)).toBe(409);
    // Not the refusal of an agent that is running, which a later lookup would have met.
    expect(answer?.json).toMatchObject({
      error: { code: "AGENT_EXISTS", message: expect.stringMatching(/at the same time/) },
    });
  });
});
