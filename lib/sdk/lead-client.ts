import { z } from "zod";
import {
  agentDetailSchema,
  agentViewSchema,
  connectedSessionSchema,
  registeredAgentSchema,
  type AgentDetailWire,
  type AgentViewWire,
  type ConnectedSession,
  type RegisteredAgent,
} from "../shared/api/agent";
import { eventSchema, type EventWire } from "../shared/api/event";
import { requestViewSchema, type RequestViewWire } from "../shared/api/request";
import type { QuestionAnswerInput } from "../shared/protocol/question";
import { HttpTransport, type TransportOptions } from "./transport";

export type ConnectSessionInput = {
  sessionId: string;
  cwd: string;
  model?: string;
  parentSessionId?: string;
  agentId?: string;
  agentType?: string;
};

/**
 * What a human's API token does over the public API; the server allows each call only to the
 * token's scope: `supervisor` (agents, worker tokens, exits, events), `connect` (register agents
 * and sessions of its own), `decide` (answer requests), `admin`.
 */
export class LeadClient {
  private readonly transport: HttpTransport;

  constructor(baseUrl: string, token: string, options: TransportOptions = {}) {
    this.transport = new HttpTransport(baseUrl, token, options);
  }

  /** Every agent, those long gone included: the supervisor recovers a worker offline for days. */
  async listAgents(): Promise<AgentViewWire[]> {
    return (
      await this.transport.call(
        "GET",
        "/agents?gone=all",
        z.object({ items: z.array(agentViewSchema) }),
      )
    ).items;
  }

  getAgent(name: string): Promise<AgentDetailWire> {
    return this.transport.call("GET", `/agents/${encodeURIComponent(name)}`, agentDetailSchema);
  }

  registerAgent(body: { name: string; role?: string; prompt?: string }): Promise<RegisteredAgent> {
    return this.transport.call("POST", "/agents", registeredAgentSchema, { body });
  }

  /** A Claude Code session's agent and token: the same answer for the same session, every time. */
  connectSession(body: ConnectSessionInput): Promise<ConnectedSession> {
    return this.transport.call("POST", "/connect/sessions", connectedSessionSchema, { body });
  }

  /** A new incarnation of an existing agent, with the configuration the server has stored. */
  respawnAgent(name: string): Promise<RegisteredAgent> {
    return this.transport.call(
      "POST",
      `/agents/${encodeURIComponent(name)}/respawn`,
      registeredAgentSchema,
    );
  }

  issueWorkerToken(name: string): Promise<RegisteredAgent> {
    return this.transport.call(
      "POST",
      `/agents/${encodeURIComponent(name)}/worker-token`,
      registeredAgentSchema,
    );
  }

  reportExit(
    name: string,
    body: { incarnation: number; exitCode: number | null; signal: string | null; reason?: string },
  ): Promise<AgentViewWire> {
    return this.transport.call(
      "POST",
      `/agents/${encodeURIComponent(name)}/exit`,
      agentViewSchema,
      {
        body,
      },
    );
  }

  getRequest(id: string): Promise<RequestViewWire> {
    return this.transport.call("GET", `/requests/${encodeURIComponent(id)}`, requestViewSchema);
  }

  /**
   * The Lead's answer to an agent's request (a `decide` or `admin` token); a question's in
   * `answer`, an approval's edits in `editedArgs` (a tool call) or `editedPlan`.
   */
  decide(
    id: string,
    body: {
      type: string;
      approve: boolean;
      feedback?: string;
      answer?: QuestionAnswerInput;
      editedArgs?: Record<string, unknown>;
      editedPlan?: string;
    },
  ): Promise<RequestViewWire> {
    return this.transport.call(
      "POST",
      `/requests/${encodeURIComponent(id)}/responses`,
      requestViewSchema,
      { body },
    );
  }

  async newestEventId(): Promise<number> {
    const page = await this.transport.call("GET", "/events?order=desc&limit=1", eventPageSchema);
    return page.items[0]?.id ?? 0;
  }

  async eventsAfter(after: number): Promise<EventWire[]> {
    return (await this.transport.call("GET", `/events?after=${after}&limit=500`, eventPageSchema))
      .items;
  }
}

const eventPageSchema = z.object({ items: z.array(eventSchema) });
