import type { Task } from "../generated/prisma/client";

export type TaskView = {
  id: string;
  title: string;
  description: string | null;
  status: string;
  assignee: string | null;
  createdAt: string;
  completedAt: string | null;
};

export function toTaskView(task: Task & { assignee: { name: string } | null }): TaskView {
  return {
    id: task.id,
    title: task.title,
    description: task.description,
    status: task.status,
    assignee: task.assignee?.name ?? null,
    createdAt: task.createdAt.toISOString(),
    completedAt: task.completedAt?.toISOString() ?? null,
  };
}
