import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { recheckCompletion } from "../../lib/tasks/mutations";
import { api, createTask, lead, registerAgent, type TestAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/** An agent that approved the Lead's shutdown: it is `stopping`, and stopping is one-way. */
async function agentThatAgreedToStop(): Promise<TestAgent> {
  const agent = await registerAgent();
  const ask = await api.requestShutdown((await lead()).headers, agent.name, { reason: "stop" });
  await api.respond(agent.headers, String(ask.json.id), {
    type: "shutdown_response",
    approve: true,
  });
  expect((await api.me(agent.headers)).json).toMatchObject({ status: "stopping" });
  return agent;
}

/**
 * Red team: "stopping is one-way … changes nothing more" (decision 011). A stopping agent could
 * still claim an open task (POST /tasks/{id}/claim → 200), which moved its work on and took the
 * task from the pool; once the agent ended, the task stayed claimed by an ended agent and nobody
 * else could claim it (409 TASK_NOT_AVAILABLE). It could also submit a new plan.
 */
describe("a stopping agent (red team)", () => {
  it("cannot claim a task", async () => {
    const agent = await agentThatAgreedToStop();
    const task = await createTask("grab me");

    const claim = await api.claimTask(agent.headers, task);
    expect(claim.status).toBe(409);
    expect(claim.json.error?.code).toBe("AGENT_STOPPING");

    await api.forceStop((await lead()).headers, agent.name);
    const other = await registerAgent();
    expect((await api.claimTask(other.headers, task)).status).toBe(200);
  });

  it("cannot ask for new work with a plan, but may still say it is done", async () => {
    const agent = await agentThatAgreedToStop();
    const plan = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "1. one more thing" },
    });
    expect(plan.status).toBe(409);
    expect(plan.json.error?.code).toBe("AGENT_STOPPING");
    const done = await api.submitRequest(agent.headers, {
      type: "shutdown",
      payload: { reason: "my work is saved" },
    });
    expect(done.status).toBe(201);
  });

  it("cannot complete the task it holds", async () => {
    const agent = await registerAgent();
    const task = await createTask("half done");
    expect((await api.claimTask(agent.headers, task)).status).toBe(200);
    const ask = await api.requestShutdown((await lead()).headers, agent.name, { reason: "stop" });
    await api.respond(agent.headers, String(ask.json.id), {
      type: "shutdown_response",
      approve: true,
    });

    const complete = await api.completeTask(agent.headers, task);
    expect(complete.status).toBe(409);
    expect(complete.json.error?.code).toBe("AGENT_STOPPING");
    expect(await getDb().task.findUniqueOrThrow({ where: { id: task } })).toMatchObject({
      status: "claimed",
    });
  });

  it("cannot complete it when it agreed to stop after its attempt was recorded", () => {
    // Red team, by reading: the attempt's verdict and the finish are two transactions, and the
    // finish re-checked the plan gate alone; a shutdown approved between them let it through.
    expect(() => recheckCompletion({ gate: "not_required", status: "stopping" })).toThrow(
      expect.objectContaining({ code: "AGENT_STOPPING" }),
    );
    expect(() => recheckCompletion({ gate: "pending", status: "waiting_approval" })).toThrow(
      expect.objectContaining({ code: "PLAN_GATE_BLOCKED" }),
    );
    expect(() => recheckCompletion({ gate: "approved", status: "working" })).not.toThrow();
  });
});
