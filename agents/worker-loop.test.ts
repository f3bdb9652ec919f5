import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { HandshakeClient } from "../lib/sdk/agent-client";
import { ApiError } from "../lib/sdk/errors";
import type { Inbox } from "../lib/shared/api/message";
import type { Model } from "./models/model";
import { Worker } from "./worker-loop";

describe("worker loop", () => {
  it("resumes from the stored ack: its first inbox read sends no cursor, later reads the server's", async () => {
    const queries: { after?: number }[] = [];
    const inboxes: Inbox[] = [{ messages: [], cursor: 41 }];
    const client = {
      me: async () => ({
        name: "alice",
        role: "builder",
        incarnation: 2,
        gate: "not_required",
        prompt: null,
        requirePlan: false,
      }),
      heartbeat: async () => ({}),
      ack: async () => ({ ackedUpTo: 41 }),
      readInbox: async (query: { after?: number }) => {
        queries.push(query);
        const next = inboxes.shift();
        // A revoked token ends the loop quietly, as at a respawn.
        if (!next) throw new ApiError(401, "UNAUTHENTICATED", "ended", {});
        return next;
      },
    } as unknown as HandshakeClient;
    const model: Model = { next: async () => ({ toolCalls: [] }) };
    const workspace = await mkdtemp(path.join(tmpdir(), "handshake-worker-loop-"));
    try {
      const exit = await new Worker({
        client,
        model,
        workspace,
        heartbeatMs: 60_000,
        sandbox: Promise.resolve({ status: "no_sandbox", reason: "not needed here" }),
      }).run();
      expect(exit.reason).toBe("incarnation_ended");
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
    expect(queries[0]?.after).toBeUndefined();
    expect(queries[1]?.after).toBe(41);
  });
});

describe("ask_lead", () => {
  it("waits as waiting_answer without calling the model, and the next model turn carries the answer", async () => {
    const questionId = "req_question";
    const heartbeats: string[] = [];
    const inboxes: Inbox[] = [
      { messages: [], cursor: 0 },
      // While it waits, nothing new arrives: the model is not asked again.
      { messages: [], cursor: 0 },
      {
        messages: [
          {
            id: 7,
            from: "lead",
            to: "alice",
            type: "question_response",
            content: "",
            metadata: { requestId: questionId, approve: true, status: "answered" },
            incarnation: 1,
            cancelledAt: null,
            createdAt: new Date(0).toISOString(),
          },
        ],
        cursor: 7,
      },
    ];
    const client = {
      me: async () => ({
        name: "alice",
        role: "builder",
        incarnation: 1,
        gate: "not_required",
        prompt: null,
        requirePlan: false,
      }),
      heartbeat: async (status: string) => {
        heartbeats.push(status);
        return {};
      },
      ack: async () => ({ ackedUpTo: 7 }),
      checkToolCall: async () => ({ allowed: true }),
      submitRequest: async (body: { type: string }) => ({
        id: questionId,
        type: body.type,
        status: "pending",
      }),
      getRequest: async () => ({
        id: questionId,
        type: "question",
        status: "answered",
        incarnation: 1,
        feedback: null,
        decidedBy: { kind: "human", userId: "u", sessionId: "s" },
        response: { answer: { option: "production", label: "Production", text: null } },
      }),
      readInbox: async () => {
        const next = inboxes.shift();
        if (!next) throw new ApiError(401, "UNAUTHENTICATED", "ended", {});
        // A long-poll that waits a little, so heartbeats are sent while the question is open.
        if (inboxes.length === 1) await new Promise((resolve) => setTimeout(resolve, 100));
        return next;
      },
    } as unknown as HandshakeClient;
    const inputs: string[] = [];
    let turns = 0;
    const model: Model = {
      next: async ({ transcript }) => {
        turns++;
        const last = transcript.at(-1);
        inputs.push(last?.role === "user" ? last.content : "");
        if (turns > 1) return { toolCalls: [] };
        return {
          toolCalls: [
            {
              id: "call_1",
              name: "ask_lead",
              args: { question: "Where to?", options: [{ id: "production", label: "Production" }] },
            },
          ],
        };
      },
    };
    const workspace = await mkdtemp(path.join(tmpdir(), "handshake-worker-loop-"));
    const worker = new Worker({
      client,
      model,
      workspace,
      heartbeatMs: 10,
      sandbox: Promise.resolve({ status: "no_sandbox", reason: "not needed here" }),
    });
    try {
      expect((await worker.run()).reason).toBe("incarnation_ended");
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
    expect(turns).toBe(2);
    expect(inputs[1]).toMatch(
      /The Lead answered your question req_question: Production \(production\)/,
    );
    expect(heartbeats).toContain("waiting_answer");
  });
});

describe("the Lead's edits", () => {
  it("tells the model what was approved: the edited call, the edited plan", async () => {
    const message = (id: number, type: string, requestId: string) => ({
      id,
      from: "lead",
      to: "alice",
      type,
      content: "",
      metadata: { requestId, approve: true, status: "approved" },
      incarnation: 1,
      cancelledAt: null,
      createdAt: new Date(0).toISOString(),
    });
    const inboxes: Inbox[] = [
      {
        messages: [
          message(1, "tool_approval_response", "req_tool"),
          message(2, "plan_approval_response", "req_plan"),
        ],
        cursor: 2,
      },
    ];
    const responses: Record<string, Record<string, unknown>> = {
      req_tool: {
        editedArgs: { command: "rm -rf build/cache", timeoutSeconds: 30 },
        approvedCallHash: "ab12",
      },
      req_plan: { editedPlan: "1. keep build/\n2. clear the cache only" },
    };
    const client = {
      me: async () => ({
        name: "alice",
        role: "builder",
        incarnation: 1,
        gate: "approved",
        prompt: null,
        requirePlan: false,
      }),
      heartbeat: async () => ({}),
      ack: async () => ({ ackedUpTo: 2 }),
      getRequest: async (id: string) => ({
        id,
        type: id === "req_tool" ? "tool_approval" : "plan_approval",
        status: "approved",
        incarnation: 1,
        feedback: null,
        decidedBy: { kind: "human", userId: "u", sessionId: "s" },
        response: responses[id],
      }),
      readInbox: async () => {
        const next = inboxes.shift();
        if (!next) throw new ApiError(401, "UNAUTHENTICATED", "ended", {});
        return next;
      },
    } as unknown as HandshakeClient;
    const inputs: string[] = [];
    const model: Model = {
      next: async ({ transcript }) => {
        const last = transcript.at(-1);
        inputs.push(last?.role === "user" ? last.content : "");
        return { toolCalls: [] };
      },
    };
    const workspace = await mkdtemp(path.join(tmpdir(), "handshake-worker-loop-"));
    try {
      await new Worker({
        client,
        model,
        workspace,
        heartbeatMs: 60_000,
        sandbox: Promise.resolve({ status: "no_sandbox", reason: "not needed here" }),
      }).run();
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
    const notices = inputs.join("\n");
    expect(notices).toContain(
      "Your risky tool call (req_tool) was approved with the Lead's edits: the command rm -rf build/cache.",
    );
    expect(notices).toContain(
      "The Lead edited your plan before approving it. Follow the approved plan, not your own:\n1. keep build/\n2. clear the cache only",
    );
  });
});
