import type { Db } from "../db";
import { AppError } from "../errors";
import { Prisma, type Agent } from "../generated/prisma/client";
import { transactionScope } from "../transaction";
import { listPendingRequestsOfAgent } from "../requests/data";
import { toRequestView } from "../requests/views";
import { isAgentActive } from "../shared/agents/schema";
import { toAgentView, type AgentDetail, type TeamMember } from "./views";

export async function findAgentByName(db: Db, name: string): Promise<Agent> {
  const agent = await db.agent.findUnique({ where: { name } });
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `no agent named '${name}'`);
  return agent;
}

// Every column, aliased to the client's field names, so one locking statement returns what
// `findUnique` would. `satisfies` makes a new field in the schema a compile error here.
const AGENT_COLUMNS = {
  id: "id",
  name: "name",
  role: "role",
  prompt: "prompt",
  status: "status",
  gate: "gate",
  requirePlan: "require_plan",
  workVersion: "work_version",
  taskId: "task_id",
  incarnation: "incarnation",
  tokenHash: "token_hash",
  worker: "worker",
  isForcedStop: "is_forced_stop",
  inboxAckedId: "inbox_acked_id",
  stopDeadlineAt: "stop_deadline_at",
  lastHeartbeatAt: "last_heartbeat_at",
  ownerTokenId: "owner_token_id",
  toolHost: "tool_host",
  connectorKey: "connector_key",
  connector: "connector",
  createdAt: "created_at",
  updatedAt: "updated_at",
} as const satisfies Record<keyof Agent, string>;

const AGENT_SELECT_LIST = Prisma.raw(
  Object.entries(AGENT_COLUMNS)
    .map(([field, column]) => `${column} AS "${field}"`)
    .join(", "),
);

/**
 * Locks the agent's row for the rest of the transaction and reads it, in one statement. Every
 * change to an agent's fence (incarnation, work version, task, gate) and every decision about its
 * requests takes this lock first, so a decision can never interleave with a respawn or a task switch.
 */
export async function lockAgent(db: Db, agentId: string): Promise<Agent> {
  const [agent] = await db.$queryRaw<Agent[]>`
    SELECT ${AGENT_SELECT_LIST} FROM agents WHERE id = ${agentId}::uuid FOR UPDATE`;
  if (!agent) throw new AppError("AGENT_NOT_FOUND", `no agent with id ${agentId}`);
  transactionScope(db)?.lockedAgentIds.add(agentId);
  return agent;
}

/**
 * Locks the agent an agent's token speaks for and refuses it unless the token's incarnation is the
 * current one (STALE_INCARNATION) and the agent is still active (AGENT_NOT_ACTIVE). `incarnation`
 * undefined: the caller is not the agent itself (a Lead or a worker acting for it).
 */
export async function lockActingAgent(
  db: Db,
  agentId: string,
  incarnation: number | undefined,
): Promise<Agent> {
  const agent = await lockAgent(db, agentId);
  if (incarnation !== undefined && incarnation !== agent.incarnation) {
    throw new AppError("STALE_INCARNATION", "this token belongs to an incarnation that has ended");
  }
  if (!isAgentActive(agent.status)) {
    throw new AppError("AGENT_NOT_ACTIVE", `agent '${agent.name}' is ${agent.status}`);
  }
  return agent;
}

/** Takes the agent's row lock without reading the row; nothing to send if this transaction holds it. */
export async function lockAgentRow(db: Db, agentId: string): Promise<void> {
  const scope = transactionScope(db);
  if (scope?.lockedAgentIds.has(agentId)) return;
  await db.$queryRaw`SELECT 1 FROM agents WHERE id = ${agentId}::uuid FOR UPDATE`;
  scope?.lockedAgentIds.add(agentId);
}

export async function listAgents(db: Db): Promise<Agent[]> {
  return db.agent.findMany({ orderBy: { name: "asc" } });
}

/** The team board: every agent with what blocks it, in four queries whatever the team's size. */
export async function listTeamMembers(db: Db): Promise<TeamMember[]> {
  const [agents, pending, blocked] = await Promise.all([
    listAgents(db),
    db.request.findMany({
      where: { status: "pending" },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
    db.toolCall.groupBy({
      by: ["agentId", "incarnation"],
      where: { isAllowed: false },
      _count: { _all: true },
    }),
  ]);
  const taskIds = agents.flatMap((agent) => (agent.taskId ? [agent.taskId] : []));
  const tasks =
    taskIds.length === 0
      ? []
      : await db.task.findMany({
          where: { id: { in: taskIds } },
          select: { id: true, title: true },
        });
  const titles = new Map(tasks.map((task) => [task.id, task.title]));
  return agents.map((agent) => ({
    ...toAgentView(agent),
    taskTitle: agent.taskId ? (titles.get(agent.taskId) ?? null) : null,
    blockedToolCalls:
      blocked.find((row) => row.agentId === agent.id && row.incarnation === agent.incarnation)
        ?._count._all ?? 0,
    pendingRequests: pending.filter((request) => request.agentId === agent.id).map(toRequestView),
  }));
}

export async function getAgentDetail(db: Db, name: string): Promise<AgentDetail> {
  const agent = await findAgentByName(db, name);
  return { ...toAgentView(agent), pendingRequests: await listPendingRequestsOfAgent(db, agent.id) };
}
