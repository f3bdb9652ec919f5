import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createTask, lead, registerAgent, submitPlan, type TestAgent } from "../api/fixtures";
import { holdLock } from "../support/held-lock";

afterAll(() => getDb().$disconnect());

async function taskStatus(id: string) {
  const task = await getDb().task.findUniqueOrThrow({ where: { id } });
  return { status: task.status, assigneeId: task.assigneeId };
}

async function approvedWithoutTask(agent: TestAgent) {
  const plan = await submitPlan(agent, "only read the docs, no task");
  await api.respond((await lead()).headers, String(plan.json.id), {
    type: "plan_approval_response",
    approve: true,
  });
  expect((await api.me(agent.headers)).json).toMatchObject({ gate: "approved", taskId: null });
}

/**
 * Red team: a claim belonged to the agent's row, not to the incarnation that made it. After a
 * forced stop the task stayed `claimed` by an ended agent, so nobody could take it; the next
 * incarnation under the same name then "claimed" it through the already-mine shortcut, which
 * skipped the work switch, and completed it under a plan approved for no task.
 */
describe("a task claimed by an ended incarnation (red team)", () => {
  it("goes back to the pool when the incarnation is stopped", async () => {
    const first = await registerAgent();
    const task = await createTask("deploy prod");
    expect((await api.claimTask(first.headers, task)).status).toBe(200);

    await api.forceStop((await lead()).headers, first.name);

    expect(await taskStatus(task)).toEqual({ status: "open", assigneeId: null });
    expect((await api.getAgent((await lead()).headers, first.name)).json).toMatchObject({
      status: "shutdown",
      taskId: null,
    });
    const other = await registerAgent();
    expect((await api.claimTask(other.headers, task)).status).toBe(200);
  });

  it("goes back to the pool when an offline agent is registered again", async () => {
    const first = await registerAgent();
    const task = await createTask("migrate the database");
    await api.claimTask(first.headers, task);
    await getDb().agent.update({ where: { name: first.name }, data: { status: "offline" } });

    const second = await registerAgent({ name: first.name, requirePlan: true });

    expect(await taskStatus(task)).toEqual({ status: "open", assigneeId: null });
    expect((await api.me(second.headers)).json).toMatchObject({ taskId: null });
  });

  it("is claimed by the next incarnation only as new work: the plan gate closes again", async () => {
    const first = await registerAgent({ requirePlan: true });
    const task = await createTask("rotate the keys");
    await api.claimTask(first.headers, task);
    await api.forceStop((await lead()).headers, first.name);
    const second = await registerAgent({ name: first.name, requirePlan: true });
    await approvedWithoutTask(second);

    expect((await api.claimTask(second.headers, task)).status).toBe(200);

    expect((await api.me(second.headers)).json).toMatchObject({ gate: "required", taskId: task });
    const write = await api.toolCall(second.headers, {
      tool: "write_file",
      args: { path: "a.txt", content: "x" },
    });
    expect(write.json).toMatchObject({ allowed: false, code: "PLAN_GATE_BLOCKED" });
    const complete = await api.completeTask(second.headers, task);
    expect(complete.json.error?.code).toBe("PLAN_GATE_BLOCKED");
  });

  it("is not claimed by a call that waited on the agent's lock while it was stopped", async () => {
    // Red team: the token was checked before the stop committed, the claim ran after it, and the
    // stopped agent held the task again.
    const agent = await registerAgent();
    const task = await createTask("claimed in the gap");
    const held = await holdLock("SELECT 1 FROM agents WHERE name = $1 FOR UPDATE", [agent.name]);
    const stop = api.forceStop((await lead()).headers, agent.name);
    await held.untilWaiting(1);
    const claim = api.claimTask(agent.headers, task);
    await held.untilWaiting(2);
    await held.release();

    expect((await stop).status).toBe(200);
    expect((await claim).json.error?.code).toBe("AGENT_NOT_ACTIVE");
    expect(await taskStatus(task)).toEqual({ status: "open", assigneeId: null });
  });

  it("is not claimed for the next incarnation by a call of the one it replaced", async () => {
    const first = await registerAgent();
    const task = await createTask("claimed across a respawn");
    await getDb().agent.update({ where: { name: first.name }, data: { status: "offline" } });
    const held = await holdLock("SELECT 1 FROM agents WHERE name = $1 FOR UPDATE", [first.name]);
    const respawn = api.respawn((await lead()).headers, first.name);
    await held.untilWaiting(1);
    const claim = api.claimTask(first.headers, task);
    await held.untilWaiting(2);
    await held.release();

    expect((await respawn).status).toBe(201);
    expect((await claim).json.error?.code).toBe("STALE_INCARNATION");
    expect(await taskStatus(task)).toEqual({ status: "open", assigneeId: null });
  });

  it("left claimed by an earlier release cannot be completed or re-taken by a later one", async () => {
    const first = await registerAgent();
    const task = await createTask("ship it");
    await api.claimTask(first.headers, task);
    // The state an earlier release left behind: the task claimed by the agent's row, while its
    // current incarnation holds no task (migration 030 releases such claims).
    await getDb().agent.update({ where: { name: first.name }, data: { taskId: null } });

    const claim = await api.claimTask(first.headers, task);
    expect(claim.json.error?.code).toBe("TASK_NOT_AVAILABLE");
    const complete = await api.completeTask(first.headers, task);
    expect(complete.json.error?.code).toBe("TASK_NOT_AVAILABLE");
    expect(await taskStatus(task)).toMatchObject({ status: "claimed" });
  });
});

/**
 * Red team: `write_file`/`edit_file` judged a path that is not a string as the workspace itself and
 * allowed the call; a tool host that passes the arguments on (Node's fs takes a URL-like object)
 * would write where the object points.
 */
describe("a file tool's path that is not a string, or empty (red team)", () => {
  const paths = [
    { href: "file:///etc/passwd", protocol: "file:", pathname: "/etc/passwd", hostname: "" },
    ["/etc/passwd"],
    42,
    null,
    undefined,
    "",
  ];
  for (const path of paths) {
    for (const tool of ["write_file", "edit_file"]) {
      it(`${tool} with path ${JSON.stringify(path)} is refused`, async () => {
        const agent = await registerAgent();
        const verdict = await api.toolCall(agent.headers, {
          tool,
          args: { path, content: "x", oldText: "a", newText: "b" },
        });
        expect(verdict.json).toMatchObject({ allowed: false, code: "PATH_OUTSIDE_WORKSPACE" });
        expect(String(verdict.json.reason)).toContain("path");
      });
    }
  }
});
