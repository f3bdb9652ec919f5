import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { RequestView } from "../../lib/requests/views";
import type { TaskView } from "../../lib/tasks/views";
import type { ToolVerdict } from "../../lib/tool-calls/schema";
import type { HandshakeClient } from "../../lib/sdk/agent-client";
import { env } from "../../lib/env";
import type { ToolCall } from "../../agents/models/model";
import { dispatchToolCall } from "../../agents/tools/dispatch";
import {
  probeSandbox,
  readSandboxSettings,
  type SandboxLimits,
  type SandboxSettings,
  type SandboxState,
} from "../../agents/tools/sandbox";
import type { ToolContext } from "../../agents/tools/tool-definition";
import { WorkState } from "../../agents/tools/work-state";
import { makeRequestView } from "./request-view";

export type RecordedCall = { method: string; args: unknown[] };

function makeTaskView(id: string, status: string): TaskView {
  const completedAt = status === "done" ? "2025-01-01T01:00:00.000Z" : null;
  return {
    id,
    title: "Migrate the schema",
    description: null,
    status,
    assignee: "alice",
    createdAt: "2025-01-01T00:00:00.000Z",
    completedAt,
  };
}

/**
 * A stand-in for HandshakeClient with only the methods the tools use. It records every call, so
 * tests can assert the server was asked; `verdict` is what checkToolCall answers (or throws).
 */
export class FakeClient {
  readonly calls: RecordedCall[] = [];
  verdict: ToolVerdict | Error = { allowed: true };
  /** When set, every protocol method throws it instead of answering. */
  failure: Error | null = null;
  /** Runs while the gate is being asked: what another process does between the ask and the write. */
  duringCheck: (() => Promise<void>) | null = null;

  private record(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
    if (this.failure && method !== "checkToolCall") throw this.failure;
  }

  callsTo(method: string): RecordedCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  async checkToolCall(
    tool: string,
    args: Record<string, unknown>,
    options: Record<string, unknown> = {},
  ): Promise<ToolVerdict> {
    if (Object.keys(options).length > 0) this.record("checkToolCall", tool, args, options);
    else this.record("checkToolCall", tool, args);
    await this.duringCheck?.();
    if (this.verdict instanceof Error) throw this.verdict;
    return this.verdict;
  }

  async sendMessage(to: string, content: string) {
    this.record("sendMessage", to, content);
    return {
      id: 7,
      from: "alice",
      to,
      type: "message",
      content,
      metadata: {},
      createdAt: "2025-01-01T00:00:00.000Z",
    };
  }

  async submitRequest(body: { type: string; payload: Record<string, unknown> }) {
    this.record("submitRequest", body);
    return makeRequestView({ id: `req-${body.type}`, type: body.type, payload: body.payload });
  }

  async respond(id: string, body: { type: string; approve: boolean; feedback?: string }) {
    this.record("respond", id, body);
    return makeRequestView({
      id,
      type: "shutdown",
      sender: "lead",
      target: "alice",
      status: body.approve ? "approved" : "rejected",
    });
  }

  async claimTask(id: string) {
    this.record("claimTask", id);
    return makeTaskView(id, "claimed");
  }

  async completeTask(id: string) {
    this.record("completeTask", id);
    return makeTaskView(id, "done");
  }
}

/** This machine's sandbox settings (as a worker here would use them), with some limits changed. */
export function testSandboxSettings(
  overrides: { limits?: Partial<SandboxLimits>; bwrapPath?: string } = {},
): SandboxSettings {
  const settings = readSandboxSettings(env, process.getuid?.() === 0);
  return {
    ...settings,
    ...(overrides.bwrapPath ? { bwrapPath: overrides.bwrapPath } : {}),
    limits: { ...settings.limits, ...overrides.limits },
  };
}

export type Harness = {
  workspace: string;
  sandbox: SandboxState;
  /** A sibling folder outside the workspace, for escape attempts to aim at. */
  outside: string;
  client: FakeClient;
  context: ToolContext;
  gate: { value: string };
  stopping: { value: boolean };
  submittedPlans: RequestView[];
  askedQuestions: RequestView[];
  idleCount: { value: number };
  call(name: string, args: Record<string, unknown>): ReturnType<typeof dispatchToolCall>;
  cleanup(): Promise<void>;
};

/**
 * A temp workspace beside an outside folder, a fake client, an open ("approved") gate, and the
 * sandbox as the worker's start-up probe finds it on this machine.
 */
export async function createHarness(
  sandboxOptions: Parameters<typeof testSandboxSettings>[0] = {},
): Promise<Harness> {
  const root = await mkdtemp(path.join(tmpdir(), "handshake-tools-"));
  const workspace = path.join(root, "workspace");
  const outside = path.join(root, "outside");
  await Promise.all([mkdir(workspace), mkdir(outside)]);
  const sandbox = await probeSandbox(workspace, testSandboxSettings(sandboxOptions));
  const client = new FakeClient();
  const gate = { value: "approved" };
  const stopping = { value: false };
  const submittedPlans: RequestView[] = [];
  const askedQuestions: RequestView[] = [];
  const idleCount = { value: 0 };
  const context: ToolContext = {
    workspace,
    sandbox,
    client: client as unknown as HandshakeClient,
    getGate: () => gate.value,
    isStopping: () => stopping.value,
    state: new WorkState(),
    onSubmitPlan: (request) => submittedPlans.push(request),
    onAskLead: (request) => askedQuestions.push(request),
    onIdle: () => {
      idleCount.value += 1;
    },
  };
  let sequence = 0;
  return {
    workspace,
    sandbox,
    outside,
    client,
    context,
    gate,
    stopping,
    submittedPlans,
    askedQuestions,
    idleCount,
    call: (name, args) => {
      const toolCall: ToolCall = { id: `call-${++sequence}`, name, args };
      return dispatchToolCall(toolCall, context);
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
