import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createTask, lead, registerAgent, submitPlan, type TestAgent } from "./fixtures";

afterAll(() => getDb().$disconnect());

async function snapshot(requestId: string) {
  const db = getDb();
  const request = await db.request.findUniqueOrThrow({ where: { id: requestId } });
  const agent = await db.agent.findUniqueOrThrow({ where: { id: request.agentId } });
  return {
    request: {
      status: request.status,
      feedback: request.feedback,
      respondedBy: request.respondedBy,
    },
    agent: {
      gate: agent.gate,
      status: agent.status,
      incarnation: agent.incarnation,
      workVersion: agent.workVersion,
    },
    // The agent's own: other test files send messages meanwhile.
    messages: await db.message.count({
      where: { OR: [{ agentId: agent.id }, { sender: agent.name }, { recipient: agent.name }] },
    }),
  };
}

async function expectRefused(
  requestId: string,
  attempt: () => Promise<{ status: number; json: Record<string, unknown> }>,
  status: number,
  code: string,
) {
  const before = await snapshot(requestId);
  const response = await attempt();
  expect(response.status).toBe(status);
  expect((response.json.error as { code: string }).code).toBe(code);
  expect(await snapshot(requestId)).toEqual(before);
  return response;
}

async function leadShutdown(agent: TestAgent): Promise<string> {
  const created = await api.requestShutdown((await lead()).headers, agent.name, {
    reason: "wrap up",
  });
  return String(created.json.id);
}

describe("forged and stale responses are refused, state unchanged", () => {
  it("unknown id → 404 REQUEST_NOT_FOUND", async () => {
    const response = await api.respond(
      (await lead()).headers,
      "req_00000000000000000000000000000000",
      {
        type: "plan_approval_response",
        approve: true,
      },
    );
    expect(response.status).toBe(404);
    expect(response.json.error?.code).toBe("REQUEST_NOT_FOUND");
  });

  it("wrong response type → 422 TYPE_MISMATCH", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = String((await submitPlan(agent)).json.id);
    const { headers } = await lead();
    await expectRefused(
      plan,
      () => api.respond(headers, plan, { type: "shutdown_response", approve: true }),
      422,
      "TYPE_MISMATCH",
    );
    await expectRefused(
      plan,
      () => api.respond(headers, plan, { type: "plan_approval", approve: true }),
      422,
      "TYPE_MISMATCH",
    );
  });

  it("wrong responder: bob answers alice's shutdown → 403 NOT_TARGET", async () => {
    const alice = await registerAgent();
    const bob = await registerAgent();
    const shutdown = await leadShutdown(alice);
    await expectRefused(
      shutdown,
      () => api.respond(bob.headers, shutdown, { type: "shutdown_response", approve: true }),
      403,
      "NOT_TARGET",
    );
    // Nor may the Lead answer a request addressed to the agent, or an agent answer its own plan.
    await expectRefused(
      shutdown,
      async () =>
        api.respond((await lead()).headers, shutdown, { type: "shutdown_response", approve: true }),
      403,
      "NOT_TARGET",
    );
    const plan = String((await submitPlan(alice)).json.id);
    await expectRefused(
      plan,
      () => api.respond(alice.headers, plan, { type: "plan_approval_response", approve: true }),
      403,
      "NOT_TARGET",
    );
    // The real target can.
    const answered = await api.respond(alice.headers, shutdown, {
      type: "shutdown_response",
      approve: true,
    });
    expect(answered.json).toMatchObject({ status: "approved", respondedBy: alice.name });
  });

  it("a viewer cannot decide: 403", async () => {
    const agent = await registerAgent();
    const plan = String((await submitPlan(agent)).json.id);
    const { signedInHuman } = await import("../route-client");
    const viewer = await signedInHuman("viewer");
    await expectRefused(
      plan,
      () => api.respond(viewer.headers, plan, { type: "plan_approval_response", approve: true }),
      403,
      "FORBIDDEN",
    );
  });

  it("replayed response → 409 ALREADY_DECIDED carrying the stored decision", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = String((await submitPlan(agent)).json.id);
    const { headers, email } = await lead();
    const body = { type: "plan_approval_response", approve: true, feedback: "ok" };
    expect((await api.respond(headers, plan, body)).status).toBe(200);
    const replay = await expectRefused(
      plan,
      () => api.respond(headers, plan, { ...body, approve: false, feedback: "changed my mind" }),
      409,
      "ALREADY_DECIDED",
    );
    expect(replay.json.error).toMatchObject({
      request: { id: plan, status: "approved", feedback: "ok", respondedBy: email },
    });
  });

  it("decision after a task switch → 409 STALE_WORK_VERSION", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const taskA = await createTask("task A");
    const taskB = await createTask("task B");
    await api.claimTask(agent.headers, taskA);
    const plan = String((await submitPlan(agent, "plan for A")).json.id);
    await api.claimTask(agent.headers, taskB);
    expect((await api.me(agent.headers)).json).toMatchObject({ gate: "required", taskId: taskB });
    await expectRefused(
      plan,
      async () =>
        api.respond((await lead()).headers, plan, {
          type: "plan_approval_response",
          approve: true,
        }),
      409,
      "STALE_WORK_VERSION",
    );
  });

  it("an approved plan no longer counts after a release", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const task = await createTask("released task");
    await api.claimTask(agent.headers, task);
    const plan = String((await submitPlan(agent)).json.id);
    await api.respond((await lead()).headers, plan, {
      type: "plan_approval_response",
      approve: true,
    });
    expect((await api.me(agent.headers)).json.gate).toBe("approved");
    await api.releaseTask(agent.headers, task);
    expect((await api.me(agent.headers)).json).toMatchObject({ gate: "required", taskId: null });
    expect(
      (await api.toolCall(agent.headers, { tool: "write_file", args: { path: "x" } })).json.allowed,
    ).toBe(false);
  });

  it("response to a previous incarnation → 409 STALE_INCARNATION; the old token is dead", async () => {
    const first = await registerAgent({ requirePlan: true });
    const shutdown = await leadShutdown(first);
    const plan = String((await submitPlan(first)).json.id);
    const { headers } = await lead();
    await api.forceStop(headers, first.name);
    const respawn = await api.registerAgent(headers, {
      name: first.name,
      role: "tester",
      requirePlan: true,
    });
    expect(respawn.json).toMatchObject({ agent: { incarnation: 2, status: "starting" } });
    const second = { ...first, headers: { authorization: `Bearer ${String(respawn.json.token)}` } };

    await expectRefused(
      plan,
      () => api.respond(headers, plan, { type: "plan_approval_response", approve: true }),
      409,
      "STALE_INCARNATION",
    );
    // The new alice cannot answer (or be stopped by) the old alice's shutdown request.
    await expectRefused(
      shutdown,
      () => api.respond(second.headers, shutdown, { type: "shutdown_response", approve: true }),
      409,
      "STALE_INCARNATION",
    );
    expect((await api.me(first.headers)).status).toBe(401);
    expect((await api.me(second.headers)).json).toMatchObject({
      incarnation: 2,
      status: "starting",
    });
  });
});
