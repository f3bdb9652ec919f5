import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { listTasks } from "../../tasks/data";
import { claimTask, completeTask, createTask, releaseTask } from "../../tasks/mutations";
import { createTaskSchema, listTasksQuerySchema, taskParamsSchema } from "../../tasks/schema";

export const tasks = definePath("/api/v1/tasks", {
  GET: defineRoute(
    { access: "human_or_agent", scopes: ["admin", "decide", "read"], query: listTasksQuerySchema },
    async ({ query }) => ({ items: await listTasks(getDb(), query.status), nextCursor: null }),
  ),
  POST: defineRoute(
    { access: "lead", scopes: ["admin"], body: createTaskSchema, status: 201 },
    ({ body }) => createTask(getDb(), body),
  ),
});

export const taskClaim = definePath("/api/v1/tasks/{id}/claim", {
  POST: defineRoute(
    { access: "agent", scopes: [], params: taskParamsSchema },
    ({ actor, params }) => claimTask(getDb(), actor, params.id),
  ),
});

export const taskComplete = definePath("/api/v1/tasks/{id}/complete", {
  POST: defineRoute(
    { access: "agent", scopes: [], params: taskParamsSchema, agentRate: "tool_calls" },
    ({ actor, params }) => completeTask(getDb(), actor, params.id),
  ),
});

export const taskRelease = definePath("/api/v1/tasks/{id}/release", {
  POST: defineRoute(
    { access: "agent", scopes: [], params: taskParamsSchema },
    ({ actor, params }) => releaseTask(getDb(), actor, params.id),
  ),
});
