import { afterAll, describe, expect, it } from "vitest";
import { agentExit as exitRoute } from "../../lib/api/v1/agents";
import { getDb } from "../../lib/db";
import { forceOverdueStops } from "../../lib/agents/mutations";
import { callRoute } from "../route-client";
import {
  api,
  createTask,
  lead,
  registerAgent,
  submitPlan,
  type ApiResponse,
  type TestAgent,
} from "./fixtures";

// Issue 12, items 1–5: each block is an attack that worked against the server before the fix.

afterAll(() => getDb().$disconnect());

type Message = { id: number; type: string; content: string; metadata: Record<string, unknown> };

function messagesOf(response: ApiResponse): Message[] {
  return response.json.messages as Message[];
}

async function respawn(name: string): Promise<TestAgent> {
  return registerAgent({ name });
}

async function reportExit(name: string, incarnation: number, exitCode: number) {
  const response = await callRoute(exitRoute.POST, {
    path: `/api/v1/agents/${name}/exit`,
    params: { name },
    body: { incarnation, exitCode, signal: null },
    headers: (await lead()).headers,
  });
  expect(response.status, JSON.stringify(response.json)).toBe(200);
}

async function approveShutdownAsAgent(agent: TestAgent): Promise<void> {
  const asked = await api.requestShutdown((await lead()).headers, agent.name, {
    reason: "wrap up",
  });
  expect(asked.status).toBe(201);
  const answered = await api.respond(agent.headers, String(asked.json.id), {
    type: "shutdown_response",
    approve: true,
  });
  expect(answered.status, JSON.stringify(answered.json)).toBe(200);
}

describe("1. messages belong to the incarnation they were sent to", () => {
  it("a respawned agent never reads the old incarnation's protocol messages or its cancelled plain ones", async () => {
    const first = await registerAgent();
    const { headers } = await lead();
    await api.requestShutdown(headers, first.name, { reason: "old question" });
    await api.sendMessage(headers, { to: first.name, content: "old instruction" });
    await api.forceStop(headers, first.name);
    const second = await respawn(first.name);

    const inbox = await api.inbox(second.headers);
    expect(inbox.status).toBe(200);
    expect(messagesOf(inbox)).toEqual([]);
    // Not even by asking for everything from the start.
    expect(messagesOf(await api.inbox(second.headers, "?after=0"))).toEqual([]);
    const stored = await getDb().message.findMany({
      where: { recipient: first.name, type: "message" },
    });
    expect(stored.map((message) => message.cancelledAt)).toEqual([expect.any(Date)]);
    // The timeline shows it as not delivered.
    const timeline = await api.timeline(headers, first.name);
    const items = timeline.json.items as { kind: string; message?: Record<string, unknown> }[];
    expect(
      items.find((item) => item.kind === "message" && item.message?.content === "old instruction")
        ?.message,
    ).toMatchObject({ incarnation: 1, cancelledAt: expect.any(String) });
  });

  it("after a crash, unacknowledged plain messages carry over marked as sent to the previous incarnation; protocol ones do not", async () => {
    const first = await registerAgent();
    const { headers } = await lead();
    const read = await api.sendMessage(headers, { to: first.name, content: "already handled" });
    const readId = Number(read.json.id);
    expect((await api.ack(first.headers, readId)).status).toBe(200);
    await api.requirePlan(headers, first.name, { reason: "plan first" });
    await api.sendMessage(headers, { to: first.name, content: "still to do" });
    await reportExit(first.name, 1, 1);
    const second = await respawn(first.name);

    const messages = messagesOf(await api.inbox(second.headers));
    expect(messages.map((message) => [message.type, message.content])).toEqual([
      ["message", "still to do"],
    ]);
    expect(messages[0]?.metadata).toMatchObject({ sentToIncarnation: 1 });
  });

  it("a clean stop after an approved shutdown leaves unread messages undelivered, not carried", async () => {
    const first = await registerAgent();
    await approveShutdownAsAgent(first);
    await api.sendMessage((await lead()).headers, { to: first.name, content: "too late" });
    await reportExit(first.name, 1, 0);
    const second = await respawn(first.name);
    expect(messagesOf(await api.inbox(second.headers))).toEqual([]);
  });
});

describe("2. stopping is one-way", () => {
  it("after approving a shutdown, a heartbeat cannot go back to working and mutating tools are refused", async () => {
    const agent = await registerAgent();
    await approveShutdownAsAgent(agent);

    const beat = await api.heartbeat(agent.headers, { status: "working" });
    expect(beat.status).toBe(409);
    expect(beat.json.error?.code).toBe("AGENT_STOPPING");
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "stopping" });

    const write = await api.toolCall(agent.headers, { tool: "write_file", args: { path: "a" } });
    expect(write.status).toBe(200);
    expect(write.json).toMatchObject({ allowed: false, code: "AGENT_STOPPING" });
    const read = await api.toolCall(agent.headers, { tool: "read_file", args: { path: "a" } });
    expect(read.json).toEqual({ allowed: true });
    expect((await api.heartbeat(agent.headers, { status: "stopping" })).status).toBe(200);
  });

  it("a plan approved while stopping does not bring the agent back to working", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = await submitPlan(agent);
    await approveShutdownAsAgent(agent);
    const decided = await api.respond((await lead()).headers, String(plan.json.id), {
      type: "plan_approval_response",
      approve: true,
    });
    expect(decided.status).toBe(200);
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "stopping" });
  });

  it("an approved stop that has not ended within its grace period is forced", async () => {
    const agent = await registerAgent();
    await approveShutdownAsAgent(agent);
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    expect(row.stopDeadlineAt).not.toBeNull();
    // Within the grace period nothing happens.
    expect(await forceOverdueStops(getDb())).not.toContain(agent.name);
    await getDb().agent.update({
      where: { name: agent.name },
      data: { stopDeadlineAt: new Date(Date.now() - 1_000) },
    });
    expect(await forceOverdueStops(getDb())).toContain(agent.name);
    const stopped = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    expect(stopped).toMatchObject({ status: "shutdown", isForcedStop: true });
  });
});

describe("3. a decision after the deadline", () => {
  it("is refused with REQUEST_EXPIRED and the stored request, and the timeout policy applies without the sweeper", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = await submitPlan(agent);
    const id = String(plan.json.id);
    await getDb().request.update({
      where: { id },
      data: { expiresAt: new Date(Date.now() - 700) },
    });

    const late = await api.respond((await lead()).headers, id, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(late.status).toBe(409);
    expect(late.json.error).toMatchObject({
      code: "REQUEST_EXPIRED",
      request: { id, status: "expired", respondedBy: "system" },
    });
    // Plans auto-reject: the gate stays shut, and the agent is told.
    expect((await api.me(agent.headers)).json).toMatchObject({ gate: "rejected" });
    const answer = messagesOf(await api.inbox(agent.headers)).find(
      (message) => message.type === "plan_approval_response",
    );
    expect(answer?.metadata).toMatchObject({ requestId: id, approve: false, status: "expired" });
    // Once the deadline has ended it (here, or by the sweeper), every later decision hears why:
    // it read ALREADY_DECIDED, which says someone decided (round nine).
    const again = await api.respond((await lead()).headers, id, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(again.json.error).toMatchObject({
      code: "REQUEST_EXPIRED",
      request: { id, status: "expired" },
    });
  });
});

describe("4. idempotency keys", () => {
  it("are scoped to the incarnation: a new incarnation reusing a key gets a new request", async () => {
    const first = await registerAgent();
    const body = { type: "plan_approval", payload: { plan: "p" }, idempotencyKey: "k-1" };
    const old = await api.submitRequest(first.headers, body);
    await api.respond((await lead()).headers, String(old.json.id), {
      type: "plan_approval_response",
      approve: true,
    });
    await api.forceStop((await lead()).headers, first.name);
    const second = await respawn(first.name);
    const fresh = await api.submitRequest(second.headers, body);
    expect(fresh.status).toBe(201);
    expect(fresh.json).toMatchObject({ status: "pending", incarnation: 2 });
    expect(fresh.json.id).not.toBe(old.json.id);
  });

  it("with another payload are refused with IDEMPOTENCY_KEY_REUSED", async () => {
    const agent = await registerAgent();
    const first = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "one" },
      idempotencyKey: "k-2",
    });
    const same = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "one" },
      idempotencyKey: "k-2",
    });
    expect(same.json.id).toBe(first.json.id);
    const other = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "two" },
      idempotencyKey: "k-2",
    });
    expect(other.status).toBe(409);
    expect(other.json.error?.code).toBe("IDEMPOTENCY_KEY_REUSED");
  });
});

describe("5. tool approvals are fenced to the work", () => {
  const risky = { tool: "bash", args: { command: "rm -rf build" } };

  it("an approval does not survive a task switch", async () => {
    const taskId = await createTask("first");
    const agent = await registerAgent({ taskId });
    const raised = await api.toolCall(agent.headers, risky);
    expect(raised.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    await api.respond((await lead()).headers, String(raised.json.requestId), {
      type: "tool_approval_response",
      approve: true,
    });
    expect((await api.releaseTask(agent.headers, taskId)).status).toBe(200);
    const after = await api.toolCall(agent.headers, risky);
    expect(after.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(after.json.requestId).not.toBe(raised.json.requestId);
  });

  it("an approval given after the task switch is refused as stale", async () => {
    const taskId = await createTask("second");
    const agent = await registerAgent({ taskId });
    const raised = await api.toolCall(agent.headers, risky);
    expect((await api.releaseTask(agent.headers, taskId)).status).toBe(200);
    const late = await api.respond((await lead()).headers, String(raised.json.requestId), {
      type: "tool_approval_response",
      approve: true,
    });
    expect(late.status).toBe(409);
    expect(late.json.error?.code).toBe("STALE_WORK_VERSION");
  });
});

describe("6. deeply nested JSON", () => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  const send = async (agent: TestAgent, depth: number) =>
    callRoute((await import("../../lib/api/v1/tool-calls")).toolCalls.POST, {
      path: "/api/v1/tool-calls",
      rawBody: `{"tool":"read_file","args":${nested(depth)}}`,
      headers: { ...agent.headers, "content-type": "application/json" },
    });

  it("5,000 levels under the body limit is 400 INVALID_INPUT and records nothing", async () => {
    const agent = await registerAgent();
    const response = await send(agent, 5_000);
    expect(response.status, JSON.stringify(response.json)).toBe(400);
    expect(response.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    expect(await getDb().toolCall.count({ where: { agent: { name: agent.name } } })).toBe(0);
  });

  it("the cap is 64 levels: the body plus 63 inside args pass, 64 do not", async () => {
    const agent = await registerAgent();
    expect((await send(agent, 63)).status).toBe(200);
    expect((await send(agent, 64)).json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });
});
