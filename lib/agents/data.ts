import type { Db } from "../db";
import { AppError } from "../errors";
import { Prisma, type Agent, type PrismaClient } from "../generated/prisma/client";
import { transactionScope } from "../transaction";
import { listPendingRequestsOfAgent } from "../requests/data";
import { toRequestView } from "../requests/views";
import { databaseNowMs } from "../database-clock";
import { GONE_AFTER_SILENT_MS, RECENT_GONE_ON_BOARD } from "../shared/agents/board";
import { agentStatusSchema, ENDED_STATUSES, isAgentActive } from "../shared/agents/schema";
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

const PRESENT_STATUSES = agentStatusSchema.options.filter(
  (status) => isAgentActive(status) && status !== "offline",
);
// Written out, not bound, and as the partial index of ended and offline agents says them
// (migration 035): the planner then reads the newest gone from that index.
const ENDED_OR_OFFLINE = Prisma.raw(
  [...ENDED_STATUSES, "offline"].map((status) => `'${status}'`).join(", "),
);

/**
 * Gone: ended, or offline and silent since before `cutoff`, and with nothing pending (an orphaned
 * request, a crashed worker's included, keeps its agent in view). `isPresent` is its complement,
 * as the client's filter; `count` counts the gone without a subquery per agent, which the planner
 * costs high enough to compile the scan (JIT, 100 ms more at 100,000 agents).
 */
function goneSince(cutoff: Date) {
  const isEndedOrSilent = Prisma.sql`agents.status IN (${ENDED_OR_OFFLINE})
    AND (agents.status <> 'offline'
         OR COALESCE(agents.last_heartbeat_at, agents.updated_at) < ${cutoff})`;
  return {
    isGone: Prisma.sql`${isEndedOrSilent} AND NOT EXISTS (
      SELECT 1 FROM requests WHERE requests.agent_id = agents.id AND requests.status = 'pending')`,
    count: Prisma.sql`
      SELECT (SELECT count(*) FROM agents WHERE ${isEndedOrSilent})
           - (SELECT count(DISTINCT requests.agent_id) FROM requests
              JOIN agents ON agents.id = requests.agent_id
              WHERE requests.status = 'pending' AND ${isEndedOrSilent}) AS count`,
    isPresent: {
      OR: [
        { status: { in: PRESENT_STATUSES } },
        { requests: { some: { status: "pending" } } },
        { status: "offline", lastHeartbeatAt: { gte: cutoff } },
        { status: "offline", lastHeartbeatAt: null, updatedAt: { gte: cutoff } },
      ],
    } satisfies Prisma.AgentWhereInput,
  };
}

export type TeamBoard = { members: TeamMember[]; olderGone: number };

/** The agents a board shows, by name: every one present and the gone ones asked for. */
async function listBoardAgents(
  db: Db,
  filter: { name?: string; gone?: "recent" | "all" },
): Promise<{ agents: Agent[]; olderGone: number }> {
  if (filter.name) {
    return { agents: await db.agent.findMany({ where: { name: filter.name } }), olderGone: 0 };
  }
  if (filter.gone === "all") {
    return { agents: await db.agent.findMany({ orderBy: { name: "asc" } }), olderGone: 0 };
  }
  const { isGone, count, isPresent } = goneSince(new Date(databaseNowMs() - GONE_AFTER_SILENT_MS));
  const recentGone = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM agents WHERE ${isGone}
    ORDER BY updated_at DESC, id DESC LIMIT ${RECENT_GONE_ON_BOARD}`;
  const agents = await db.agent.findMany({
    where: { OR: [isPresent, { id: { in: recentGone.map((agent) => agent.id) } }] },
    orderBy: { name: "asc" },
  });
  const gone =
    recentGone.length < RECENT_GONE_ON_BOARD
      ? recentGone.length
      : await db.$queryRaw<{ count: bigint }[]>(count).then(([row]) => Number(row?.count ?? 0));
  return { agents, olderGone: gone - recentGone.length };
}

/**
 * Past this many agents their ids are not sent as a filter (PostgreSQL takes 32,767 parameters a
 * statement): what blocks them is read for every agent, as the whole roster needs anyway.
 */
const MAX_FILTERED_AGENTS = 10_000;

/**
 * The team board: its agents with what blocks each, in up to six queries whatever the team's
 * size, on one snapshot (an agent that ends between two of them is in neither set otherwise).
 * `name` narrows it to one row, for a board patching itself after an event it cannot apply alone.
 */
export function listTeamMembers(
  db: PrismaClient,
  filter: { name?: string; gone?: "recent" | "all" } = {},
): Promise<TeamBoard> {
  return db.$transaction((tx) => readTeamMembers(tx, filter), {
    isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead,
    // Every agent ever (`gone=all`) can take longer than the client's default of 5 s.
    timeout: 60_000,
  });
}

async function readTeamMembers(
  db: Db,
  filter: { name?: string; gone?: "recent" | "all" },
): Promise<TeamBoard> {
  const { agents, olderGone } = await listBoardAgents(db, filter);
  if (agents.length === 0) return { members: [], olderGone };
  const ofAgents =
    agents.length <= MAX_FILTERED_AGENTS
      ? { agentId: { in: agents.map((agent) => agent.id) } }
      : {};
  const pending = await db.request.findMany({
    where: { status: "pending", ...ofAgents },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const blocked = await db.toolCall.groupBy({
    by: ["agentId", "incarnation"],
    where: { isAllowed: false, ...ofAgents },
    _count: { _all: true },
  });
  const taskIds = agents.flatMap((agent) => (agent.taskId ? [agent.taskId] : []));
  const tasks =
    taskIds.length === 0
      ? []
      : await db.task.findMany({
          where: { id: { in: taskIds } },
          select: { id: true, title: true },
        });
  const titles = new Map(tasks.map((task) => [task.id, task.title]));
  // Keyed once: a scan per agent is quadratic at a thousand agents.
  const blockedCounts = new Map(
    blocked.map((row) => [`${row.agentId}:${row.incarnation}`, row._count._all]),
  );
  const pendingByAgent = new Map<string, TeamMember["pendingRequests"]>();
  for (const request of pending) {
    const list = pendingByAgent.get(request.agentId) ?? [];
    list.push(toRequestView(request));
    pendingByAgent.set(request.agentId, list);
  }
  const members = agents.map((agent) => ({
    ...toAgentView(agent),
    taskTitle: agent.taskId ? (titles.get(agent.taskId) ?? null) : null,
    blockedToolCalls: blockedCounts.get(`${agent.id}:${agent.incarnation}`) ?? 0,
    pendingRequests: pendingByAgent.get(agent.id) ?? [],
  }));
  return { members, olderGone };
}

export async function getAgentDetail(db: Db, name: string): Promise<AgentDetail> {
  const agent = await findAgentByName(db, name);
  return { ...toAgentView(agent), pendingRequests: await listPendingRequestsOfAgent(db, agent.id) };
}
