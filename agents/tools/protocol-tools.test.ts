import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../lib/sdk/errors";
import { createHarness, type Harness } from "../../tests/support/agent-tools";

let harness: Harness;

beforeEach(async () => {
  harness = await createHarness();
});

afterEach(async () => {
  await harness.cleanup();
});

describe("protocol tools", () => {
  it("send_message sends through the client", async () => {
    const result = await harness.call("send_message", { to: "lead", content: "done with step 1" });
    expect(result).toMatchObject({ isError: false, content: "message 7 sent to lead" });
    expect(harness.client.callsTo("sendMessage")).toEqual([
      { method: "sendMessage", args: ["lead", "done with step 1"] },
    ]);
  });

  it("submit_plan submits a plan_approval request and tells the worker", async () => {
    const result = await harness.call("submit_plan", { plan: "1. migrate", summary: "migrate" });
    expect(harness.client.callsTo("submitRequest")).toEqual([
      {
        method: "submitRequest",
        args: [
          {
            type: "plan_approval",
            payload: { plan: "1. migrate", summary: "migrate" },
            idempotencyKey: expect.stringMatching(/^tool-[0-9a-f-]{36}$/),
          },
        ],
      },
    ]);
    expect(harness.submittedPlans.map((request) => request.id)).toEqual(["req-plan_approval"]);
    expect(result.content).toContain("req-plan_approval");
    expect(result.content).toContain("Wait for the Lead");
  });

  it("ask_lead sends a question and tells the worker to wait for its answer", async () => {
    const args = {
      question: "Staging or production?",
      options: [
        { id: "staging", label: "Staging" },
        { id: "production", label: "Production" },
      ],
      default: "staging",
    };
    const result = await harness.call("ask_lead", args);
    expect(harness.client.callsTo("submitRequest")[0]?.args).toEqual([
      { type: "question", payload: args, idempotencyKey: expect.any(String) },
    ]);
    expect(harness.askedQuestions.map((request) => request.id)).toEqual(["req-question"]);
    expect(result.content).toContain("req-question");
  });

  it("ask_lead refuses a question that could not be answered, before asking", async () => {
    const result = await harness.call("ask_lead", { question: "Which?", default: "x" });
    expect(result.isError).toBe(true);
    expect(harness.client.callsTo("submitRequest")).toEqual([]);
  });

  it("submit_plan leaves an absent summary out of the payload", async () => {
    await harness.call("submit_plan", { plan: "1. migrate" });
    expect(harness.client.callsTo("submitRequest")[0]?.args).toEqual([
      {
        type: "plan_approval",
        payload: { plan: "1. migrate" },
        idempotencyKey: expect.any(String),
      },
    ]);
  });

  it("each submission carries its own idempotency key, so a re-sent body finds the same request", async () => {
    await harness.call("submit_plan", { plan: "a" });
    await harness.call("submit_plan", { plan: "b" });
    const keys = harness.client
      .callsTo("submitRequest")
      .map((call) => (call.args[0] as { idempotencyKey: string }).idempotencyKey);
    expect(new Set(keys).size).toBe(2);
  });

  it("request_shutdown submits a shutdown request", async () => {
    const result = await harness.call("request_shutdown", { reason: "all tasks done" });
    expect(harness.client.callsTo("submitRequest")[0]?.args).toEqual([
      {
        type: "shutdown",
        payload: { reason: "all tasks done" },
        idempotencyKey: expect.any(String),
      },
    ]);
    expect(result.content).toContain("req-shutdown");
  });

  it("shutdown_response answers the Lead's request", async () => {
    const result = await harness.call("shutdown_response", {
      requestId: "req-9",
      approve: false,
      feedback: "mid-write",
    });
    expect(harness.client.callsTo("respond")).toEqual([
      {
        method: "respond",
        args: ["req-9", { type: "shutdown_response", approve: false, feedback: "mid-write" }],
      },
    ]);
    expect(result.content).toBe("shutdown request req-9 is now rejected");
  });

  it("claim_task and complete_task call the task endpoints", async () => {
    const claimed = await harness.call("claim_task", { taskId: "task-1" });
    const completed = await harness.call("complete_task", { taskId: "task-1" });
    expect(claimed.content).toContain("claimed task task-1");
    expect(completed.content).toContain("is done");
    expect(harness.client.calls.map((call) => call.method)).toEqual([
      "checkToolCall",
      "claimTask",
      "checkToolCall",
      "completeTask",
    ]);
  });

  it("complete_task is held by the plan gate", async () => {
    harness.gate.value = "required";
    const result = await harness.call("complete_task", { taskId: "task-1" });
    expect(result.code).toBe("PLAN_GATE_BLOCKED");
    expect(harness.client.callsTo("completeTask")).toEqual([]);
  });

  it("idle tells the worker and says it is waiting", async () => {
    const result = await harness.call("idle", {});
    expect(result).toMatchObject({ isError: false, content: "waiting for messages" });
    expect(harness.idleCount.value).toBe(1);
  });

  it("reports the server's refusal with its code", async () => {
    harness.client.failure = new ApiError(409, "TASK_TAKEN", "task-1 is claimed by bob", {});
    const result = await harness.call("claim_task", { taskId: "task-1" });
    expect(result).toMatchObject({
      isError: true,
      content: "task-1 is claimed by bob (TASK_TAKEN)",
    });
  });
});
