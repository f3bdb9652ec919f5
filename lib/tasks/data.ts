import type { Db } from "../db";
import { toTaskView, type TaskView } from "./views";

export async function listTasks(db: Db, status?: "open" | "claimed" | "done"): Promise<TaskView[]> {
  const tasks = await db.task.findMany({
    where: status ? { status } : {},
    orderBy: { createdAt: "asc" },
    include: { assignee: { select: { name: true } } },
    take: 500,
  });
  return tasks.map(toTaskView);
}
