import type { AgentDetail } from "../lib/agents/data";
import type { MessageView } from "../lib/messages/views";
import type { RequestView } from "../lib/requests/views";
import type { TaskView } from "../lib/tasks/views";
import type { ToolVerdict } from "../lib/tool-calls/schema";

/** A refusal from the API, with its typed code (see lib/errors.ts). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export type Inbox = { messages: MessageView[]; cursor: number };

const RETRYABLE_NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ETIMEDOUT"]);

function isRetryable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  return error instanceof TypeError && RETRYABLE_NETWORK_CODES.has(cause?.code ?? "");
}

/**
 * The agent's only link to Handshake: HTTP with its bearer token, exactly as an external agent in
 * any language would call it. Network failures (a server restart) are retried with backoff;
 * refusals are not, they are answers.
 */
export class HandshakeClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly options: { maxRetries?: number } = {},
  ) {}

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const maxRetries = this.options.maxRetries ?? 20;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await fetch(`${this.baseUrl}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: signal ?? null,
        });
      } catch (error) {
        if (!isRetryable(error) || attempt >= maxRetries || signal?.aborted) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** attempt, 2_000)));
        continue;
      }
      const text = await response.text();
      const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      if (!response.ok) {
        const error = (json.error ?? {}) as { code?: string; message?: string };
        throw new ApiError(response.status, error.code ?? "UNKNOWN", error.message ?? response.statusText, json);
      }
      return json as T;
    }
  }

  me(): Promise<AgentDetail> {
    return this.call("GET", "/me");
  }

  heartbeat(status: "working" | "idle" | "waiting_approval" | "stopping"): Promise<AgentDetail> {
    return this.call("POST", "/heartbeat", { status });
  }

  readInbox(query: { after?: number; waitSeconds?: number }, signal?: AbortSignal): Promise<Inbox> {
    const params = new URLSearchParams();
    if (query.after !== undefined) params.set("after", String(query.after));
    if (query.waitSeconds) params.set("wait", String(query.waitSeconds));
    return this.call("GET", `/inbox?${params.toString()}`, undefined, signal);
  }

  ack(upTo: number): Promise<{ ackedUpTo: number }> {
    return this.call("POST", "/inbox/ack", { upTo });
  }

  sendMessage(to: string, content: string): Promise<MessageView> {
    return this.call("POST", "/messages", { to, content });
  }

  submitRequest(body: {
    type: string;
    payload: Record<string, unknown>;
    idempotencyKey?: string;
    timeoutSeconds?: number;
  }): Promise<RequestView> {
    return this.call("POST", "/requests", body);
  }

  getRequest(id: string): Promise<RequestView> {
    return this.call("GET", `/requests/${encodeURIComponent(id)}`);
  }

  respond(id: string, body: { type: string; approve: boolean; feedback?: string }): Promise<RequestView> {
    return this.call("POST", `/requests/${encodeURIComponent(id)}/responses`, body);
  }

  checkToolCall(tool: string, args: Record<string, unknown>): Promise<ToolVerdict> {
    return this.call("POST", "/tool-calls", { tool, args });
  }

  listTasks(): Promise<{ items: TaskView[] }> {
    return this.call("GET", "/tasks");
  }

  claimTask(id: string): Promise<TaskView> {
    return this.call("POST", `/tasks/${encodeURIComponent(id)}/claim`);
  }

  completeTask(id: string): Promise<TaskView> {
    return this.call("POST", `/tasks/${encodeURIComponent(id)}/complete`);
  }
}
