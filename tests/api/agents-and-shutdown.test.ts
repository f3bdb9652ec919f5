import { afterAll, describe, expect, it, vi } from "vitest";
import { markSilentAgentsOffline, HEARTBEAT_TIMEOUT_MS } from "../../lib/agents/mutations";
import { agentExit as exitRoute } from "../../lib/api/v1/agents";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import {
  api,
  expireOwnAt,
  lead,
  registerAgent,
  registerWorker,
  submitPlan,
  uniqueName,
  type TestAgent,
} from "./fixtures";

// Marking silent agents offline ahead of the clock takes every agent in the database: on a database
// of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_agents");
});

afterAll(() => getDb().$disconnect());

type Message = { type: string; content: string; metadata: Record<string, unknown> };

/** The agent asks the Lead to stop, and its request's timeout (policy `approve`) answers. */
async function askToStopUntilTimedOut(agent: TestAgent) {
  const asked = await api.submitRequest(agent.headers, {
    type: "shutdown",
    payload: { reason: "my work is done" },
    timeoutSeconds: 5,
  });
  return expireOwnAt(String(asked.json.id), new Date(Date.now() + 6_000));
}

describe("agents", () => {
  it("registration returns the token once and stores only its hash", async () => {
    const { headers } = await lead();
    const name = uniqueName("Reg");
    const response = await api.registerAgent(headers, { name, role: "builder", requirePlan: true });
    expect(response.status).toBe(201);
    const token = String(response.json.token);
    expect(response.json.agent).toMatchObject({
      name: name.toLowerCase(),
      status: "starting",
      gate: "required",
      incarnation: 1,
      workVersion: 0,
    });
    const stored = await getDb().agent.findUniqueOrThrow({ where: { name: name.toLowerCase() } });
    expect(stored.tokenHash).not.toContain(token);
    expect((await api.getAgent(headers, name.toLowerCase())).json).not.toHaveProperty("token");
  });

  it.each([["LEAD"], ["agent"], ["../etc/passwd"], ["a b"], ["ä"], [""], ["x".repeat(41)]])(
    "refuses the name %j",
    async (name) => {
      const response = await api.registerAgent((await lead()).headers, { name, role: "x" });
      expect(response.status).toBe(400);
      expect(response.json.error?.code).toBe("INVALID_INPUT");
    },
  );

  it("refuses a case-insensitive duplicate of an active agent", async () => {
    const agent = await registerAgent();
    const response = await api.registerAgent((await lead()).headers, {
      name: agent.name.toUpperCase(),
      role: "x",
    });
    expect(response.status).toBe(409);
    expect(response.json.error?.code).toBe("AGENT_EXISTS");
  });

  it("refuses to register again an agent waiting on the Lead, saying so in words", async () => {
    const agent = await registerAgent();
    expect((await submitPlan(agent, "read the notes")).status).toBe(201);
    const response = await api.registerAgent((await lead()).headers, {
      name: agent.name,
      role: "x",
    });
    expect(response.status).toBe(409);
    expect(response.json.error).toEqual({
      code: "AGENT_EXISTS",
      message: `agent '${agent.name}' is still running (waiting approval); stop it before starting it again`,
    });
  });

  it("heartbeat sets status; missed heartbeats make the agent offline", async () => {
    const agent = await registerAgent();
    expect((await api.heartbeat(agent.headers, { status: "working" })).json).toMatchObject({
      status: "working",
    });
    const refused = await api.heartbeat(agent.headers, { status: "shutdown" });
    expect(refused.status).toBe(400);
    const marked = await markSilentAgentsOffline(
      getDb(),
      new Date(Date.now() + HEARTBEAT_TIMEOUT_MS + 1_000),
    );
    expect(marked).toContain(agent.name);
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "offline" });
    expect((await api.heartbeat(agent.headers, { status: "idle" })).json).toMatchObject({
      status: "idle",
    });
  });

  it("a late heartbeat cannot take an agent whose request waits on the Lead out of waiting_approval", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = await submitPlan(agent);
    expect(plan.status).toBe(201);
    // Sent before the worker knew of its plan, arriving after the plan was created.
    expect((await api.heartbeat(agent.headers, { status: "working" })).json).toMatchObject({
      status: "waiting_approval",
    });
    const decided = await api.respond((await lead()).headers, String(plan.json.id), {
      type: "plan_approval_response",
      approve: true,
    });
    expect(decided.status).toBe(200);
    expect((await api.heartbeat(agent.headers, { status: "working" })).json).toMatchObject({
      status: "working",
    });
  });

  it("heartbeat records where the agent's tools run, shows it in the agent view, and refuses unknown values", async () => {
    const agent = await registerAgent();
    const { headers } = await lead();
    expect((await api.getAgent(headers, agent.name)).json).toMatchObject({ toolHost: null });
    const reported = await api.heartbeat(agent.headers, {
      status: "working",
      toolHost: "no_sandbox",
    });
    expect(reported.json).toMatchObject({ status: "working", toolHost: "no_sandbox" });
    expect((await api.getAgent(headers, agent.name)).json).toMatchObject({
      toolHost: "no_sandbox",
    });
    const event = await getDb().event.findFirstOrThrow({
      where: { kind: "agent.updated", subject: `agent:${agent.name}` },
      orderBy: { id: "desc" },
    });
    expect(event.data).toMatchObject({ toolHost: "no_sandbox" });
    // A same-status heartbeat that changes only the tool host is still recorded.
    await api.heartbeat(agent.headers, { status: "working", toolHost: "external" });
    expect((await api.getAgent(headers, agent.name)).json).toMatchObject({ toolHost: "external" });
    // Omitted: unchanged.
    await api.heartbeat(agent.headers, { status: "idle" });
    expect((await api.getAgent(headers, agent.name)).json).toMatchObject({ toolHost: "external" });
    const refused = await api.heartbeat(agent.headers, { status: "idle", toolHost: "unconfined" });
    expect(refused.status).toBe(400);
    expect(refused.json.error?.code).toBe("INVALID_INPUT");
    expect((await api.getAgent(headers, agent.name)).json).toMatchObject({ toolHost: "external" });
  });

  it("only an agent the supervisor runs may say its tools run in the sandbox", async () => {
    // Red team: any agent's heartbeat put it on the board, in green, as sandboxed.
    const agent = await registerAgent();
    await api.heartbeat(agent.headers, { status: "working", toolHost: "no_sandbox" });
    const claim = await api.heartbeat(agent.headers, { status: "idle", toolHost: "sandboxed" });
    expect(claim.status).toBe(403);
    expect(claim.json.error?.code).toBe("TOOL_HOST_NOT_ALLOWED");
    expect((await api.me(agent.headers)).json).toMatchObject({
      status: "working",
      toolHost: "no_sandbox",
    });
    const worker = await registerWorker();
    expect(
      (await api.heartbeat(worker.headers, { status: "working", toolHost: "sandboxed" })).json,
    ).toMatchObject({ status: "working", toolHost: "sandboxed" });
  });

  it("force-stop ends the incarnation at once and cancels its requests", async () => {
    const agent = await registerAgent();
    const plan = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "x" },
    });
    const { headers } = await lead();
    const stopped = await api.forceStop(headers, agent.name);
    expect(stopped.json).toMatchObject({ status: "shutdown", isForcedStop: true });
    expect((await api.getRequest(headers, String(plan.json.id))).json).toMatchObject({
      status: "cancelled",
    });
    expect((await api.heartbeat(agent.headers, { status: "working" })).status).toBe(401);
    expect(
      (await api.sendMessage(headers, { to: agent.name, content: "hello?" })).json.error?.code,
    ).toBe("AGENT_NOT_ACTIVE");
  });
});

describe("ended incarnations stay ended", () => {
  it("deciding or expiring a crashed agent's orphaned request does not bring it back", async () => {
    const { headers } = await lead();
    const crashed = await registerAgent();
    const plan = await api.submitRequest(crashed.headers, {
      type: "plan_approval",
      payload: { plan: "x" },
    });
    const exit = await callRoute(exitRoute.POST, {
      path: `/api/v1/agents/${crashed.name}/exit`,
      body: { incarnation: 1, exitCode: 1, signal: null },
      headers,
      params: { name: crashed.name },
    });
    expect(exit.json).toMatchObject({ status: "crashed" });
    const decided = await api.respond(headers, String(plan.json.id), {
      type: "plan_approval_response",
      approve: true,
    });
    expect(decided.json).toMatchObject({ status: "approved" });
    expect((await api.getAgent(headers, crashed.name)).json).toMatchObject({ status: "crashed" });

    const stopping = await registerAgent();
    const asked = await api.submitRequest(stopping.headers, {
      type: "shutdown",
      payload: {},
      timeoutSeconds: 5,
    });
    await callRoute(exitRoute.POST, {
      path: `/api/v1/agents/${stopping.name}/exit`,
      body: { incarnation: 1, exitCode: 1, signal: null },
      headers,
      params: { name: stopping.name },
    });
    await expireOwnAt(String(asked.json.id), new Date(Date.now() + 6_000));
    expect((await api.getRequest(headers, String(asked.json.id))).json).toMatchObject({
      status: "expired",
    });
    expect((await api.getAgent(headers, stopping.name)).json).toMatchObject({ status: "crashed" });
    // And it can be respawned at once.
    const respawn = await api.registerAgent(headers, { name: stopping.name, role: "tester" });
    expect(respawn.json).toMatchObject({ agent: { incarnation: 2 } });
  });
});

describe("shutdown", () => {
  it("Lead → agent: returns the existing pending request instead of a second one; approve → stopping", async () => {
    const agent = await registerAgent();
    const { headers } = await lead();
    const first = await api.requestShutdown(headers, agent.name, { reason: "end of day" });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({
      type: "shutdown",
      sender: "lead",
      target: agent.name,
      timeoutPolicy: "force-stops",
    });
    const second = await api.requestShutdown(headers, agent.name, { reason: "again" });
    expect(second.status).toBe(200);
    expect(second.json.id).toBe(first.json.id);

    const inbox = (await api.inbox(agent.headers)).json.messages as Message[];
    expect(inbox.filter((message) => message.type === "shutdown")).toHaveLength(1);
    expect(inbox.at(-1)).toMatchObject({
      type: "shutdown",
      content: "end of day",
      metadata: { requestId: first.json.id },
    });

    const approved = await api.respond(agent.headers, String(first.json.id), {
      type: "shutdown_response",
      approve: true,
    });
    expect(approved.json).toMatchObject({ status: "approved", respondedBy: agent.name });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "stopping" });
  });

  it("an agent no supervisor runs, stopping as agreed, reports it ended: a clean stop, not a forced one", async () => {
    // Round nine: such an agent had no way to say it had left, and ended forced at its grace
    // period's end however promptly it exited.
    const agent = await registerAgent();
    const { headers } = await lead();
    const early = await api.heartbeat(agent.headers, { status: "ended" });
    expect(early.json).toMatchObject({ error: { code: "FORBIDDEN" } });
    // Stopping on its own is no approved shutdown: its end is still the grace period's.
    const unasked = await registerAgent();
    expect((await api.heartbeat(unasked.headers, { status: "stopping" })).status).toBe(200);
    const unaskedEnd = await api.heartbeat(unasked.headers, { status: "ended" });
    expect(unaskedEnd.json).toMatchObject({ error: { code: "FORBIDDEN" } });
    expect((await api.me(unasked.headers)).json).toMatchObject({ status: "stopping" });
    const asked = await api.requestShutdown(headers, agent.name, { reason: "end of day" });
    await api.respond(agent.headers, String(asked.json.id), {
      type: "shutdown_response",
      approve: true,
    });
    const ended = await api.heartbeat(agent.headers, { status: "ended" });
    expect(ended.status).toBe(200);
    expect(ended.json).toMatchObject({ status: "shutdown", isForcedStop: false });
    const stopped = await getDb().event.findFirst({
      where: { kind: "agent.stopped", subject: `agent:${agent.name}` },
    });
    expect(stopped?.data).toMatchObject({
      isForced: false,
      reason: "stopped after an approved shutdown",
    });
    // An ended incarnation's token is refused as unknown, with what may have ended it.
    const refused = await api.me(agent.headers);
    expect(refused.status).toBe(401);
    expect(refused.json.error?.message).toMatch(/stops working when its incarnation ends/);
  });

  it("an agent whose own shutdown its timeout approved reports it ended: a clean stop", async () => {
    // Red team: the timeout's yes left it stopping but refused its 'ended' (403), and the grace
    // period's end then recorded a forced stop.
    const agent = await registerAgent();
    const expired = await askToStopUntilTimedOut(agent);
    expect(expired).toMatchObject({
      status: "expired",
      decidedBy: { kind: "timeout", policy: "approve" },
    });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "stopping" });
    const ended = await api.heartbeat(agent.headers, { status: "ended" });
    expect(ended.status).toBe(200);
    expect(ended.json).toMatchObject({ status: "shutdown", isForcedStop: false });
  });

  it("a force-stop of an agent that ended cleanly leaves it as it was: only a session comes back", async () => {
    const agent = await registerAgent();
    await askToStopUntilTimedOut(agent);
    expect((await api.heartbeat(agent.headers, { status: "ended" })).status).toBe(200);
    const stoppedEvents = () =>
      getDb().event.count({ where: { subject: `agent:${agent.name}`, kind: "agent.stopped" } });
    const before = await stoppedEvents();
    const forced = await api.forceStop((await lead()).headers, agent.name);
    expect(forced.status).toBe(200);
    expect(forced.json).toMatchObject({ status: "shutdown", isForcedStop: false });
    expect(await stoppedEvents()).toBe(before);
  });

  it("Lead → agent: reject with a reason keeps it working and returns the reason to the Lead", async () => {
    const agent = await registerAgent();
    await api.heartbeat(agent.headers, { status: "working" });
    const { headers } = await lead();
    const request = await api.requestShutdown(headers, agent.name);
    const rejected = await api.respond(agent.headers, String(request.json.id), {
      type: "shutdown_response",
      approve: false,
      feedback: "mid-write: 2 of 3 files done",
    });
    expect(rejected.json).toMatchObject({
      status: "rejected",
      feedback: "mid-write: 2 of 3 files done",
    });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "working" });
    const toLead = await getDb().message.findFirstOrThrow({
      where: {
        recipient: "lead",
        type: "shutdown_response",
        metadata: { path: ["requestId"], equals: String(request.json.id) },
      },
    });
    expect(toLead).toMatchObject({ sender: agent.name, content: "mid-write: 2 of 3 files done" });
  });

  it("refused for an agent that is not active", async () => {
    const agent = await registerAgent();
    const { headers } = await lead();
    await api.forceStop(headers, agent.name);
    const response = await api.requestShutdown(headers, agent.name);
    expect(response.status).toBe(409);
    expect(response.json.error?.code).toBe("AGENT_NOT_ACTIVE");
  });

  it("Agent → Lead: waits in the Lead's inbox; reject with feedback keeps it; approve lets it stop", async () => {
    const agent = await registerAgent();
    const { headers } = await lead();
    const asked = await api.submitRequest(agent.headers, {
      type: "shutdown",
      payload: { reason: "my work is done" },
    });
    expect(asked.json).toMatchObject({
      sender: agent.name,
      target: "lead",
      status: "pending",
      timeoutPolicy: "auto-approves",
    });
    const pending = await api.listRequests(headers, `?status=pending&agent=${agent.name}`);
    expect((pending.json.items as { id: string }[]).map((item) => item.id)).toEqual([
      asked.json.id,
    ]);

    await api.respond(headers, String(asked.json.id), {
      type: "shutdown_response",
      approve: false,
      feedback: "one more task: docs",
    });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "working" });
    const reply = ((await api.inbox(agent.headers)).json.messages as Message[]).at(-1);
    expect(reply).toMatchObject({
      type: "shutdown_response",
      content: "one more task: docs",
      metadata: { approve: false },
    });

    const again = await api.submitRequest(agent.headers, {
      type: "shutdown",
      payload: { reason: "docs done too" },
    });
    await api.respond(headers, String(again.json.id), { type: "shutdown_response", approve: true });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "stopping" });
  });
});
