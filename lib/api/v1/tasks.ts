import { pageSchema } from "../../shared/api/page";
import { taskViewSchema } from "../../shared/api/task";
import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { listTasks } from "../../tasks/data";
import { claimTask, completeTask, createTask, releaseTask } from "../../tasks/mutations";
import { createTaskSchema, listTasksQuerySchema, taskParamsSchema } from "../../tasks/schema";

export const tasks = definePath("/api/v1/tasks", {
  GET: defineRoute(
    {
      access: "human_or_agent",
      scopes: ["admin", "decide", "read"],
      query: listTasksQuerySchema,
      responses: { 200: pageSchema(taskViewSchema) },
    },
    async ({ query }) => ({ items: await listTasks(getDb(), query.status), nextCursor: null }),
  ),
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      body: createTaskSchema,
      status: 201,
      responses: { 201: taskViewSchema },
    },
    ({ body }) => createTask(getDb(), body),
  ),
});

export const taskClaim = definePath("/api/v1/tasks/{id}/claim", {
  POST: defineRoute(
    {
      access: "agent",
      scopes: [],
      params: taskParamsSchema,
      agentRate: "state_changes",
      responses: { 200: taskViewSchema },
    },
    ({ actor, params }) => claimTask(getDb(), actor, params.id),
  ),
});

export const taskComplete = definePath("/api/v1/tasks/{id}/complete", {
  POST: defineRoute(
    {
      access: "agent",
      scopes: [],
      params: taskParamsSchema,
      agentRate: "tool_calls",
      responses: { 200: taskViewSchema },
    },
    ({ actor, params }) => completeTask(getDb(), actor, params.id),
  ),
});

export const taskRelease = definePath("/api/v1/tasks/{id}/release", {
  POST: defineRoute(
    {
      access: "agent",
      scopes: [],
      params: taskParamsSchema,
      agentRate: "state_changes",
      responses: { 200: taskViewSchema },
    },
    ({ actor, params }) => releaseTask(getDb(), actor, params.id),
  ),
});
