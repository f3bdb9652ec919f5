import type { Agent } from "../generated/prisma/client";
import type { RequestView } from "../requests/views";
import {
  agentStatusSchema,
  connectorSchema,
  type Connector,
  gateStateSchema,
  type AgentStatus,
  type GateState,
  type ToolHost,
} from "../shared/agents/schema";

export type AgentView = {
  name: string;
  role: string;
  prompt: string | null;
  status: AgentStatus;
  gate: GateState;
  workVersion: number;
  taskId: string | null;
  incarnation: number;
  lastHeartbeatAt: string | null;
  /** Where its tools run, as its worker last reported; null before the first report. */
  toolHost: ToolHost | null;
  requirePlan: boolean;
  isForcedStop: boolean;
  /** Set for a connected Claude Code session or teammate (POST /connect/sessions). */
  connector: Connector | null;
  worker: unknown;
  createdAt: string;
};

export function toAgentView(agent: Agent): AgentView {
  return {
    name: agent.name,
    role: agent.role,
    prompt: agent.prompt,
    status: agentStatusSchema.parse(agent.status),
    gate: gateStateSchema.parse(agent.gate),
    workVersion: agent.workVersion,
    taskId: agent.taskId,
    incarnation: agent.incarnation,
    lastHeartbeatAt: agent.lastHeartbeatAt?.toISOString() ?? null,
    toolHost: agent.toolHost,
    requirePlan: agent.requirePlan,
    isForcedStop: agent.isForcedStop,
    connector: agent.connector === null ? null : connectorSchema.parse(agent.connector),
    worker: agent.worker,
    createdAt: agent.createdAt.toISOString(),
  };
}

export type TeamMember = AgentView & {
  /** The title of the agent's current task. */
  taskTitle: string | null;
  /** Tool calls the gate refused in the current incarnation (a respawn starts from zero). */
  blockedToolCalls: number;
  /** Both directions, oldest first: what it waits on the Lead for, and what the Lead asked it. */
  pendingRequests: RequestView[];
};

export type AgentDetail = AgentView & { pendingRequests: RequestView[] };
