import type { AgentDetail } from "../lib/agents/views";
import type { ToolHost } from "../lib/shared/agents/schema";
import type { MessageView } from "../lib/messages/views";
import type { RequestView } from "../lib/requests/views";
import type { TaskView } from "../lib/tasks/views";
import type { ToolVerdict } from "../lib/tool-calls/schema";
import { HttpTransport } from "./http-transport";

export type Inbox = { messages: MessageView[]; cursor: number };

export { ApiError } from "./http-transport";

/** The agent's only link to Handshake: the HTTP API with its own token. */
export class HandshakeClient {
  private readonly transport: HttpTransport;

  constructor(baseUrl: string, token: string, options: { maxRetries?: number } = {}) {
    this.transport = new HttpTransport(baseUrl, token, options.maxRetries);
  }

  private call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    return this.transport.call<T>(method, path, body, signal);
  }

  me(): Promise<AgentDetail> {
    return this.call("GET", "/me");
  }

  heartbeat(
    status: "working" | "idle" | "waiting_approval" | "waiting_answer" | "stopping",
    toolHost?: ToolHost,
  ): Promise<AgentDetail> {
    return this.call("POST", "/heartbeat", toolHost ? { status, toolHost } : { status });
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

  respond(
    id: string,
    body: { type: string; approve: boolean; feedback?: string },
  ): Promise<RequestView> {
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
