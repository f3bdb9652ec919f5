import type { Db } from "../db";
import { AppError } from "../errors";
import type { Agent } from "../generated/prisma/client";
import { listPendingRequestsOfAgent } from "../requests/data";
import type { RequestView } from "../requests/views";
import { agentStatusSchema, gateStateSchema, type AgentStatus, type GateState } from "./schema";

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
  requirePlan: boolean;
  isForcedStop: boolean;
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
    requirePlan: agent.requirePlan,
    isForcedStop: agent.isForcedStop,
    worker: agent.worker,
    createdAt: agent.createdAt.toISOString(),
  };
}

export async function findAgentByName(db: Db, name: string): Promise<Agent> {
  const agent = await db.agent.findUnique({ where: { name } });
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `no agent named '${name}'`);
  return agent;
}

/**
 * Locks the agent's row for the rest of the transaction. Every change to an agent's fence
 * (incarnation, work version, task, gate) and every decision about its requests takes this lock
 * first, so a decision can never interleave with a respawn or a task switch.
 */
export async function lockAgent(db: Db, agentId: string): Promise<Agent> {
  await db.$queryRaw`SELECT 1 FROM agents WHERE id = ${agentId}::uuid FOR UPDATE`;
  return db.agent.findUniqueOrThrow({ where: { id: agentId } });
}

export async function listAgents(db: Db): Promise<Agent[]> {
  return db.agent.findMany({ orderBy: { name: "asc" } });
}

export type AgentDetail = AgentView & { pendingRequests: RequestView[] };

export async function getAgentDetail(db: Db, name: string): Promise<AgentDetail> {
  const agent = await findAgentByName(db, name);
  return { ...toAgentView(agent), pendingRequests: await listPendingRequestsOfAgent(db, agent.id) };
}
