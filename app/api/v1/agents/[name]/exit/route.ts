import { recordWorkerExit } from "@/lib/agents/mutations";
import { agentParamsSchema, workerExitSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  {
    access: "lead",
    scopes: ["admin", "supervisor"],
    params: agentParamsSchema,
    body: workerExitSchema,
  },
  ({ actor, params, body }) => recordWorkerExit(getDb(), params.name, body, actor),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
