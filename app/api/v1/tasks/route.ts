import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { listTasks } from "@/lib/tasks/data";
import { createTask } from "@/lib/tasks/mutations";
import { createTaskSchema, listTasksQuerySchema } from "@/lib/tasks/schema";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin"], body: createTaskSchema, status: 201 },
  ({ body }) => createTask(getDb(), body),
);

export const GET = defineRoute(
  { access: "human_or_agent", scopes: ["admin", "decide", "read"], query: listTasksQuerySchema },
  async ({ query }) => ({
    items: await listTasks(getDb(), query.status),
    nextCursor: null,
  }),
);

export const { PUT, PATCH, DELETE } = otherMethods({ GET, POST });
