import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { completeTask } from "@/lib/tasks/mutations";
import { taskParamsSchema } from "@/lib/tasks/schema";

export const POST = defineRoute(
  { access: "agent", scopes: [], params: taskParamsSchema, agentRate: "tool_calls" },
  ({ actor, params }) => completeTask(getDb(), actor, params.id),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
