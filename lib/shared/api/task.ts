import { z } from "zod";

export const taskViewSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  status: z.string(),
  assignee: z.string().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type TaskViewWire = z.infer<typeof taskViewSchema>;
