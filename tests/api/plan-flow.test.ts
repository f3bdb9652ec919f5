import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, lead, registerAgent, submitPlan } from "./fixtures";

afterAll(() => getDb().$disconnect());

describe("plan approval", () => {
  it("full plan path: submit → pending → Lead approves with feedback → gate approved, mutating tool allowed", async () => {
    const agent = await registerAgent({ requirePlan: true });
    expect((await api.me(agent.headers)).json).toMatchObject({ gate: "required" });
    expect(
      (await api.toolCall(agent.headers, { tool: "write_file", args: { path: "a.txt" } })).json,
    ).toMatchObject({
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
    });

    const submitted = await submitPlan(agent);
    expect(submitted.status).toBe(201);
    expect(submitted.json).toMatchObject({
      type: "plan_approval",
      status: "pending",
      sender: agent.name,
      target: "lead",
      incarnation: 1,
      timeoutPolicy: "auto-rejects",
    });
    expect(String(submitted.json.id)).toMatch(/^req_[0-9a-f]{32}$/);
    expect((await api.me(agent.headers)).json).toMatchObject({
      gate: "pending",
      status: "waiting_approval",
    });

    const { headers, email } = await lead();
    const decided = await api.respond(headers, String(submitted.json.id), {
      type: "plan_approval_response",
      approve: true,
      feedback: "go ahead, keep it small",
    });
    expect(decided.status).toBe(200);
    expect(decided.json).toMatchObject({
      status: "approved",
      feedback: "go ahead, keep it small",
      respondedBy: email,
    });

    expect((await api.me(agent.headers)).json).toMatchObject({
      gate: "approved",
      status: "working",
    });
    expect(
      (await api.toolCall(agent.headers, { tool: "write_file", args: { path: "a.txt" } })).json,
    ).toEqual({
      allowed: true,
    });
    const inbox = await api.inbox(agent.headers);
    const response = (
      inbox.json.messages as { type: string; metadata: Record<string, unknown>; content: string }[]
    ).find((message) => message.type === "plan_approval_response");
    expect(response).toMatchObject({
      content: "go ahead, keep it small",
      metadata: { requestId: submitted.json.id, approve: true },
    });
  });

  it("reject path: gate rejected, feedback delivered, resubmission gets a new id", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const first = await submitPlan(agent, "rm -rf the build and start over");
    const { headers } = await lead();

    const withoutFeedback = await api.respond(headers, String(first.json.id), {
      type: "plan_approval_response",
      approve: false,
    });
    expect(withoutFeedback.status).toBe(422);
    expect(withoutFeedback.json.error?.code).toBe("FEEDBACK_REQUIRED");
    expect((await api.getRequest(headers, String(first.json.id))).json.status).toBe("pending");

    const rejected = await api.respond(headers, String(first.json.id), {
      type: "plan_approval_response",
      approve: false,
      feedback: "too destructive: keep the build",
    });
    expect(rejected.json).toMatchObject({
      status: "rejected",
      feedback: "too destructive: keep the build",
    });
    expect((await api.me(agent.headers)).json).toMatchObject({ gate: "rejected" });
    expect(
      (await api.toolCall(agent.headers, { tool: "bash", args: { command: "make" } })).json,
    ).toMatchObject({
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
    });
    const messages = (await api.inbox(agent.headers)).json.messages as {
      type: string;
      content: string;
      metadata: Record<string, unknown>;
    }[];
    expect(messages.at(-1)).toMatchObject({
      type: "plan_approval_response",
      content: "too destructive: keep the build",
      metadata: { approve: false, requestId: first.json.id },
    });

    const revised = await submitPlan(agent, "incremental rebuild");
    expect(revised.status).toBe(201);
    expect(revised.json.id).not.toBe(first.json.id);
    expect((await api.me(agent.headers)).json).toMatchObject({ gate: "pending" });
  });

  it("a second plan while one is pending supersedes it: never two pending", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const first = await submitPlan(agent, "plan A");
    const second = await submitPlan(agent, "plan B");
    expect(second.status).toBe(201);
    const { headers } = await lead();
    expect((await api.getRequest(headers, String(first.json.id))).json).toMatchObject({
      status: "superseded",
    });
    const detail = await api.getAgent(headers, agent.name);
    expect((detail.json.pendingRequests as { id: string }[]).map((request) => request.id)).toEqual([
      second.json.id,
    ]);
    const late = await api.respond(headers, String(first.json.id), {
      type: "plan_approval_response",
      approve: true,
    });
    expect(late.status).toBe(409);
    expect(late.json.error).toMatchObject({
      code: "ALREADY_DECIDED",
      request: { id: first.json.id, status: "superseded" },
    });
  });

  it("the same idempotency key returns the same request, never a duplicate", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const body = {
      type: "plan_approval",
      payload: { plan: "retry-safe" },
      idempotencyKey: "attempt-1",
    };
    const first = await api.submitRequest(agent.headers, body);
    const retried = await api.submitRequest(agent.headers, body);
    expect(first.status).toBe(201);
    expect(retried.status).toBe(200);
    expect(retried.json.id).toBe(first.json.id);
    const reused = await api.submitRequest(agent.headers, {
      ...body,
      type: "shutdown",
      payload: {},
    });
    expect(reused.json.error?.code).toBe("IDEMPOTENCY_KEY_REUSED");
  });

  it("refuses payloads that do not fit the type, and unknown types", async () => {
    const agent = await registerAgent();
    const empty = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "  " },
    });
    expect(empty.status).toBe(400);
    expect(empty.json.error?.message).toMatch(/^payload\.plan/);
    const extra = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "x", sneaky: 1 },
    });
    expect(extra.status).toBe(400);
    const unknown = await api.submitRequest(agent.headers, {
      type: "launch_missiles",
      payload: {},
    });
    expect(unknown.status).toBe(422);
    expect(unknown.json.error?.code).toBe("UNKNOWN_TYPE");
    expect(await getDb().request.count({ where: { agent: { name: agent.name } } })).toBe(0);
  });

  it("the Lead can require a plan at any time: the gate closes before the agent reads the message", async () => {
    const agent = await registerAgent();
    expect(
      (await api.toolCall(agent.headers, { tool: "bash", args: { command: "touch x" } })).json
        .allowed,
    ).toBe(true);
    const required = await api.requirePlan((await lead()).headers, agent.name, {
      reason: "show me first",
    });
    expect(required.json).toMatchObject({ gate: "required", requirePlan: true });
    expect(
      (await api.toolCall(agent.headers, { tool: "bash", args: { command: "touch x" } })).json,
    ).toMatchObject({
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
    });
    const messages = (await api.inbox(agent.headers)).json.messages as {
      type: string;
      content: string;
    }[];
    expect(messages.at(-1)).toMatchObject({ type: "plan_request", content: "show me first" });
  });
});
