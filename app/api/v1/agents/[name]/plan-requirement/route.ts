import { requirePlan } from "@/lib/agents/mutations";
import { agentParamsSchema, reasonSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin"], params: agentParamsSchema, body: reasonSchema },
  ({ params, body }) => requirePlan(getDb(), params.name, body.reason),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
