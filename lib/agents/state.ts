import { evictActorsAfterCommit } from "../auth/actor-cache";
import { unusableTokenHash } from "../tokens/credentials";
import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import { settleUnreadMessages } from "../messages/deliver";
import type { Agent } from "../generated/prisma/client";
import { DEFAULT_STOP_GRACE_SECONDS } from "../protocol/definition";
import type { AgentStatus, GateState, ToolHost } from "../shared/agents/schema";
import { releaseTasksHeldBy } from "../tasks/holder";
import { databaseNow } from "../database-clock";

/**
 * Changes an agent's status and/or gate and records it. The caller holds the agent's lock.
 * `stopping` is one-way: once there, no status but an ended one (endIncarnation) replaces it, and
 * entering it starts the grace period after which the sweeper forces the stop.
 */
export async function setAgentState(
  db: Db,
  agent: Agent,
  patch: {
    status?: AgentStatus;
    gate?: GateState;
    workVersion?: number;
    taskId?: string | null;
    toolHost?: ToolHost;
    stopGraceSeconds?: number;
  },
): Promise<Agent> {
  const { stopGraceSeconds, ...changes } = patch;
  const isStopping = agent.status === "stopping";
  const now = databaseNow();
  const updated = await db.agent.update({
    where: { id: agent.id },
    data: {
      ...changes,
      ...(isStopping ? { status: "stopping" } : {}),
      ...(!isStopping && changes.status === "stopping"
        ? {
            stopDeadlineAt: new Date(
              now.getTime() + (stopGraceSeconds ?? DEFAULT_STOP_GRACE_SECONDS) * 1000,
            ),
          }
        : {}),
      updatedAt: now,
    },
  });
  await appendEvent(db, "agent.updated", `agent:${agent.name}`, {
    agent: agent.name,
    incarnation: updated.incarnation,
    status: updated.status,
    gate: updated.gate,
    workVersion: updated.workVersion,
    taskId: updated.taskId,
    toolHost: updated.toolHost,
  });
  return updated;
}

/**
 * Ends the current incarnation: status `shutdown`, the token is replaced by an unusable one so
 * a worker that is still running can no longer act, and its task goes back to the pool. The caller
 * cancels pending requests first.
 */
export async function endIncarnation(
  db: Db,
  agent: Agent,
  options: {
    isForced: boolean;
    reason: string;
    status?: Extract<AgentStatus, "shutdown" | "crashed">;
  },
): Promise<Agent> {
  evictActorsAfterCommit(db, [`agent:${agent.id}`]);
  await releaseTasksHeldBy(db, agent);
  const updated = await db.agent.update({
    where: { id: agent.id },
    data: {
      status: options.status ?? "shutdown",
      taskId: null,
      isForcedStop: options.isForced,
      tokenHash: unusableTokenHash(),
      stopDeadlineAt: null,
      updatedAt: databaseNow(),
    },
  });
  // A crash interrupted the work: what it had not read waits for the respawn. A stop ended it.
  if (updated.status !== "crashed") await settleUnreadMessages(db, updated, null);
  await appendEvent(db, "agent.stopped", `agent:${agent.name}`, {
    agent: agent.name,
    incarnation: updated.incarnation,
    status: updated.status,
    isForced: options.isForced,
    reason: options.reason,
  });
  return updated;
}
