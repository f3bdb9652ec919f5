import { randomBytes } from "node:crypto";
import { hashToken } from "../auth/actor";
import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import type { Agent } from "../generated/prisma/client";
import type { AgentStatus, GateState, ToolHost } from "./schema";

/** Changes an agent's status and/or gate and records it. The caller holds the agent's lock. */
export async function setAgentState(
  db: Db,
  agent: Agent,
  patch: {
    status?: AgentStatus;
    gate?: GateState;
    workVersion?: number;
    taskId?: string | null;
    toolHost?: ToolHost;
  },
): Promise<Agent> {
  const updated = await db.agent.update({
    where: { id: agent.id },
    data: { ...patch, updatedAt: new Date() },
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
 * Ends the current incarnation: status `shutdown`, and the token is replaced by an unusable one so
 * a worker that is still running can no longer act. The caller cancels pending requests first.
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
  const updated = await db.agent.update({
    where: { id: agent.id },
    data: {
      status: options.status ?? "shutdown",
      isForcedStop: options.isForced,
      tokenHash: hashToken(`ended:${randomBytes(32).toString("hex")}`),
      updatedAt: new Date(),
    },
  });
  await appendEvent(db, "agent.stopped", `agent:${agent.name}`, {
    agent: agent.name,
    incarnation: updated.incarnation,
    status: updated.status,
    isForced: options.isForced,
    reason: options.reason,
  });
  return updated;
}
