import type { AgentActor } from "../auth/actor";
import { lockActingAgent } from "../agents/data";
import { initialGate } from "../agents/mutations";
import { setAgentState } from "../agents/state";
import type { Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import type { Agent, PrismaClient } from "../generated/prisma/client";
import { decideGate } from "../shared/protocol/gate";
import { refuseWhileStopping } from "../shared/protocol/stop-gate";
import type { ToolRisk } from "../shared/protocol/tool-risk";
import { recordToolCall } from "../tool-calls/mutations";
import type { CreateTaskInput } from "./schema";
import { setTask, withAssignee } from "./holder";
import { toTaskView, type TaskView } from "./views";
import { inTransaction } from "../transaction";
import { databaseNow } from "../database-clock";

const COMPLETE_TASK_RISK: ToolRisk = {
  class: "workspace",
  reasons: [{ class: "workspace", message: "complete_task changes state" }],
};

export async function createTask(db: PrismaClient, input: CreateTaskInput): Promise<TaskView> {
  return inTransaction(db, async (tx) => {
    const task = await tx.task.create({
      data: { title: input.title, description: input.description ?? null },
      include: withAssignee,
    });
    await appendEvent(tx, "task.created", `task:${task.id}`, {
      taskId: task.id,
      title: task.title,
    });
    return toTaskView(task);
  });
}

/**
 * The agent's work changes: the work version moves on, so any plan made for the earlier work (pending
 * or approved) no longer counts, and the gate starts over.
 */
async function switchWork(db: Db, agent: Agent, taskId: string | null): Promise<Agent> {
  return setAgentState(db, agent, {
    taskId,
    workVersion: agent.workVersion + 1,
    gate: initialGate(agent.requirePlan),
  });
}

async function lockTask(db: Db, taskId: string) {
  await db.$queryRaw`SELECT 1 FROM tasks WHERE id = ${taskId}::uuid FOR UPDATE`;
  const task = await db.task.findUnique({ where: { id: taskId } });
  if (!task) throw new AppError("TASK_NOT_FOUND", `no task ${taskId}`);
  return task;
}

export async function claimTask(
  db: PrismaClient,
  actor: AgentActor,
  taskId: string,
): Promise<TaskView> {
  return inTransaction(db, async (tx) => {
    const agent = await lockActingAgent(tx, actor.agentId, actor.incarnation);
    if (agent.status === "stopping") {
      throw new AppError("AGENT_STOPPING", "this agent agreed to stop; it takes no new task");
    }
    const task = await lockTask(tx, taskId);
    if (task.status === "claimed" && task.assigneeId === agent.id && agent.taskId === taskId) {
      return toTaskView({ ...task, assignee: { name: agent.name } });
    }
    if (task.status !== "open")
      throw new AppError("TASK_NOT_AVAILABLE", `task ${taskId} is ${task.status}`);
    // One task at a time: claiming another gives the current one back.
    if (agent.taskId) {
      await setTask(tx, agent.taskId, { status: "open", assigneeId: null }, agent.name);
    }
    const claimed = await setTask(
      tx,
      taskId,
      { status: "claimed", assigneeId: agent.id },
      agent.name,
    );
    await switchWork(tx, agent, taskId);
    return claimed;
  });
}

/**
 * Ends the agent's hold on a task it has claimed (released back to `open`, or `done`), and moves
 * its work on. `beforeFinish` runs under the agent's lock, for checks that must hold at that moment.
 */
async function finishHeldTask(
  db: PrismaClient,
  actor: AgentActor,
  taskId: string,
  outcome: { status: "open" | "done"; beforeFinish?: (agent: Agent) => void },
): Promise<TaskView> {
  return inTransaction(db, async (tx) => {
    const agent = await lockActingAgent(tx, actor.agentId, actor.incarnation);
    outcome.beforeFinish?.(agent);
    const task = await lockTask(tx, taskId);
    const isHeld =
      task.status === "claimed" && task.assigneeId === agent.id && agent.taskId === taskId;
    if (!isHeld) {
      throw new AppError("TASK_NOT_AVAILABLE", `task ${task.id} is not claimed by '${agent.name}'`);
    }
    const isDone = outcome.status === "done";
    const finished = await setTask(
      tx,
      taskId,
      isDone
        ? { status: "done", assigneeId: agent.id, completedAt: databaseNow() }
        : { status: "open", assigneeId: null },
      agent.name,
    );
    await switchWork(tx, agent, null);
    return finished;
  });
}

export function releaseTask(
  db: PrismaClient,
  actor: AgentActor,
  taskId: string,
): Promise<TaskView> {
  return finishHeldTask(db, actor, taskId, { status: "open" });
}

function refuseCompletion(verdict: { code?: string; reason?: string | undefined }): AppError {
  return new AppError(
    verdict.code === "AGENT_STOPPING" ? "AGENT_STOPPING" : "PLAN_GATE_BLOCKED",
    verdict.reason ?? "complete_task is blocked by the plan gate",
  );
}

/**
 * The verdict again, under the agent's lock as the task is finished: since the attempt was
 * recorded, in a transaction of its own, the gate may have closed (a require-plan in between) or
 * the agent agreed to stop (red team: a shutdown approved in that window let it finish the task).
 */
export function recheckCompletion(agent: Pick<Agent, "gate" | "status">): void {
  const recheck =
    refuseWhileStopping(agent.status === "stopping", "complete_task") ??
    decideGate(agent.gate, "complete_task", COMPLETE_TASK_RISK);
  if (!recheck.allowed) throw refuseCompletion(recheck);
}

/** Completing a task changes the world, so it passes the plan gate like any mutating tool. */
export async function completeTask(
  db: PrismaClient,
  actor: AgentActor,
  taskId: string,
): Promise<TaskView> {
  const verdict = await recordToolCall(db, actor, { tool: "complete_task", args: { taskId } });
  if (!verdict.allowed) throw refuseCompletion(verdict);
  return finishHeldTask(db, actor, taskId, { status: "done", beforeFinish: recheckCompletion });
}
