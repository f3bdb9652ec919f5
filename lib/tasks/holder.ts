import type { Db } from "../db";
import { appendEvent } from "../events/mutations";
import type { Agent } from "../generated/prisma/client";
import { toTaskView, type TaskView } from "./views";
import { databaseNow } from "../database-clock";

export const withAssignee = { assignee: { select: { name: true } } } as const;

export async function setTask(
  db: Db,
  taskId: string,
  data: { status: "open" | "claimed" | "done"; assigneeId: string | null; completedAt?: Date },
  agentName: string,
): Promise<TaskView> {
  const task = await db.task.update({
    where: { id: taskId },
    data: { ...data, updatedAt: databaseNow() },
    include: withAssignee,
  });
  await appendEvent(db, "task.updated", `task:${taskId}`, {
    taskId,
    status: task.status,
    agent: agentName,
  });
  return toTaskView(task);
}

/**
 * A claim is held by the incarnation that made it (decision 074): when that incarnation ends or is
 * replaced, what it held goes back to the pool, so no task waits on an agent that is gone and the
 * next incarnation under the name starts with no work. The caller holds the agent's lock.
 */
export async function releaseTasksHeldBy(db: Db, agent: Agent): Promise<void> {
  const held = await db.task.findMany({
    where: { assigneeId: agent.id, status: "claimed" },
    select: { id: true },
  });
  for (const { id } of held) {
    await setTask(db, id, { status: "open", assigneeId: null }, agent.name);
  }
}
