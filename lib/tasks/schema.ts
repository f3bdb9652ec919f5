import { z } from "zod";

export const createTaskSchema = z.strictObject({
  title: z.string().trim().min(1).max(200),
  description: z.string().trim().max(10_000).optional(),
});
export type CreateTaskInput = z.infer<typeof createTaskSchema>;

export const taskParamsSchema = z.strictObject({ id: z.uuid("task ids are UUIDs") });

export const listTasksQuerySchema = z.strictObject({
  status: z.enum(["open", "claimed", "done"]).optional(),
});
