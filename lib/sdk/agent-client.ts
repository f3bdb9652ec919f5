import { z } from "zod";
import {
  agentDetailSchema,
  agentViewSchema,
  type AgentDetailWire,
  type AgentViewWire,
} from "../shared/api/agent";
import { inboxSchema, messageViewSchema, type Inbox } from "../shared/api/message";
import { requestViewSchema, type RequestViewWire } from "../shared/api/request";
import {
  type QuestionAnswer,
  type QuestionPayload,
  questionPayloadSchema,
  questionResponseSchema,
} from "../shared/protocol/question";
import { taskViewSchema } from "../shared/api/task";
import { toolVerdictSchema, type ToolVerdictWire } from "../shared/api/tool-call";
import type { FileChange } from "../shared/protocol/file-change";
import { HttpTransport, type TransportOptions } from "./transport";

export type AgentStatusReport =
  "working" | "idle" | "waiting_approval" | "waiting_answer" | "stopping" | "ended";
export type ToolHostReport = "sandboxed" | "no_sandbox" | "external";

/** The longest long-poll the server grants on `GET /requests/{id}?wait=`. */
const MAX_WAIT_SECONDS = 30;

/**
 * How long past a question's deadline `ask()` still waits: the server's sweep applies the timeout
 * policy (the default, or unanswered) about a second after it, and the agent should hear which.
 */
const TIMEOUT_GRACE_MS = 15_000;

export type AskOptions = QuestionPayload & { timeoutSeconds?: number; signal?: AbortSignal };

/**
 * What became of a question: answered (by the Lead, or by its default at the deadline), or not —
 * `declined` by the Lead (with feedback), `timed_out` without a default, or `withdrawn` (a newer
 * question superseded it, or the agent was stopped).
 */
export type AskResult =
  | { status: "answered"; requestId: string; answer: QuestionAnswer; byDefault: boolean }
  | {
      status: "unanswered";
      requestId: string;
      reason: "declined" | "timed_out" | "withdrawn";
      feedback: string | null;
    };

function askResultOf(request: RequestViewWire): AskResult {
  const requestId = request.id;
  if (request.status === "answered") {
    const { answer } = questionResponseSchema.parse(request.response);
    return {
      status: "answered",
      requestId,
      answer,
      byDefault: request.decidedBy?.kind === "timeout",
    };
  }
  const reason =
    request.status === "pending" || request.decidedBy?.kind === "timeout"
      ? "timed_out"
      : request.status === "unanswered"
        ? "declined"
        : "withdrawn";
  return { status: "unanswered", requestId, reason, feedback: request.feedback };
}

/** An agent's only link to Handshake: the HTTP API with its own agent token. */
export class HandshakeClient {
  private readonly transport: HttpTransport;

  constructor(baseUrl: string, token: string, options: TransportOptions = {}) {
    this.transport = new HttpTransport(baseUrl, token, options);
  }

  me(): Promise<AgentDetailWire> {
    return this.transport.call("GET", "/me", agentDetailSchema);
  }

  /** The agent's record as the heartbeat left it; unlike `me()`, without its pending requests. */
  heartbeat(status: AgentStatusReport, toolHost?: ToolHostReport): Promise<AgentViewWire> {
    return this.transport.call("POST", "/heartbeat", agentViewSchema, {
      body: toolHost ? { status, toolHost } : { status },
    });
  }

  readInbox(query: { after?: number; waitSeconds?: number }, signal?: AbortSignal): Promise<Inbox> {
    const params = new URLSearchParams();
    if (query.after !== undefined) params.set("after", String(query.after));
    if (query.waitSeconds) params.set("wait", String(query.waitSeconds));
    return this.transport.call("GET", `/inbox?${params.toString()}`, inboxSchema, {
      signal,
      waitSeconds: query.waitSeconds,
    });
  }

  ack(upTo: number): Promise<{ ackedUpTo: number }> {
    return this.transport.call("POST", "/inbox/ack", z.object({ ackedUpTo: z.number() }), {
      body: { upTo },
    });
  }

  sendMessage(to: string, content: string): Promise<z.infer<typeof messageViewSchema>> {
    return this.transport.call("POST", "/messages", messageViewSchema, { body: { to, content } });
  }

  submitRequest(body: {
    type: string;
    payload: Record<string, unknown>;
    idempotencyKey?: string;
    timeoutSeconds?: number;
  }): Promise<RequestViewWire> {
    return this.transport.call("POST", "/requests", requestViewSchema, { body });
  }

  /** With `waitSeconds`, the server holds the answer until the request is decided or the wait ends. */
  getRequest(
    id: string,
    options: { waitSeconds?: number; signal?: AbortSignal } = {},
  ): Promise<RequestViewWire> {
    const query = options.waitSeconds ? `?wait=${options.waitSeconds}` : "";
    return this.transport.call(
      "GET",
      `/requests/${encodeURIComponent(id)}${query}`,
      requestViewSchema,
      options,
    );
  }

  /**
   * The request once it is no longer pending, or as it stands at the deadline (epoch ms): one
   * long-poll after another, each at most as long as the time left.
   */
  async waitForDecision(
    id: string,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<RequestViewWire> {
    for (;;) {
      const secondsLeft = Math.floor((deadline - Date.now()) / 1_000);
      const waitSeconds = Math.min(MAX_WAIT_SECONDS, secondsLeft);
      const request = await this.getRequest(
        id,
        waitSeconds >= 1 ? { waitSeconds, signal } : { signal },
      );
      if (request.status !== "pending" || waitSeconds < 1) return request;
    }
  }

  /**
   * Asks the Lead a question and waits for the answer. The payload is checked here first, so a
   * default that is not one of the options fails before anything is sent.
   */
  async ask(options: AskOptions): Promise<AskResult> {
    const { timeoutSeconds, signal, ...question } = options;
    const payload = questionPayloadSchema.parse(question);
    const request = await this.submitRequest({
      type: "question",
      payload,
      ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    });
    // The server's clock sets the deadline; only its length is used, so clock skew does not matter.
    const lifetimeMs = Date.parse(request.expiresAt) - Date.parse(request.createdAt);
    const deadline = Date.now() + lifetimeMs + TIMEOUT_GRACE_MS;
    return askResultOf(await this.waitForDecision(request.id, deadline, signal));
  }

  respond(
    id: string,
    body: { type: string; approve: boolean; feedback?: string },
  ): Promise<RequestViewWire> {
    return this.transport.call(
      "POST",
      `/requests/${encodeURIComponent(id)}/responses`,
      requestViewSchema,
      { body },
    );
  }

  /** The gate's verdict; a connected session passes its `cwd` and how long the Lead may take. */
  checkToolCall(
    tool: string,
    args: Record<string, unknown>,
    options: {
      cwd?: string;
      timeoutSeconds?: number;
      canRunEdits?: boolean;
      file?: FileChange;
    } = {},
  ): Promise<ToolVerdictWire> {
    return this.transport.call("POST", "/tool-calls", toolVerdictSchema, {
      body: { tool, args, ...options },
    });
  }

  async listTasks(): Promise<{ items: z.infer<typeof taskViewSchema>[] }> {
    return this.transport.call("GET", "/tasks", z.object({ items: z.array(taskViewSchema) }));
  }

  claimTask(id: string): Promise<z.infer<typeof taskViewSchema>> {
    return this.transport.call("POST", `/tasks/${encodeURIComponent(id)}/claim`, taskViewSchema);
  }

  completeTask(id: string): Promise<z.infer<typeof taskViewSchema>> {
    return this.transport.call("POST", `/tasks/${encodeURIComponent(id)}/complete`, taskViewSchema);
  }
}
