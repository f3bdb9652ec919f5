import type { AgentDetail, AgentView } from "../lib/agents/views";
import type { ConsoleEvent } from "../lib/shared/realtime/contract";
import { HttpTransport } from "./http-transport";

export type RegisteredAgent = { agent: AgentView; token: string };

/**
 * What the supervisor does, over the same public API, with a `supervisor`-scoped token: read
 * events and agents, issue worker tokens, report exits, respawn an existing agent. The server
 * refuses it anything else (registering an agent, deciding, minting tokens or users).
 */
export class LeadClient {
  private readonly transport: HttpTransport;

  constructor(baseUrl: string, token: string) {
    this.transport = new HttpTransport(baseUrl, token);
  }

  async listAgents(): Promise<AgentView[]> {
    return (await this.transport.call<{ items: AgentView[] }>("GET", "/agents")).items;
  }

  getAgent(name: string): Promise<AgentDetail> {
    return this.transport.call("GET", `/agents/${encodeURIComponent(name)}`);
  }

  /** A new incarnation of an existing agent, with the configuration the server has stored. */
  respawnAgent(name: string): Promise<RegisteredAgent> {
    return this.transport.call("POST", `/agents/${encodeURIComponent(name)}/respawn`);
  }

  issueWorkerToken(name: string): Promise<RegisteredAgent> {
    return this.transport.call("POST", `/agents/${encodeURIComponent(name)}/worker-token`);
  }

  reportExit(
    name: string,
    body: { incarnation: number; exitCode: number | null; signal: string | null; reason?: string },
  ): Promise<AgentView> {
    return this.transport.call("POST", `/agents/${encodeURIComponent(name)}/exit`, body);
  }

  async newestEventId(): Promise<number> {
    const page = await this.transport.call<{ items: ConsoleEvent[] }>(
      "GET",
      "/events?order=desc&limit=1",
    );
    return page.items[0]?.id ?? 0;
  }

  async eventsAfter(after: number): Promise<ConsoleEvent[]> {
    return (
      await this.transport.call<{ items: ConsoleEvent[] }>(
        "GET",
        `/events?after=${after}&limit=500`,
      )
    ).items;
  }
}
