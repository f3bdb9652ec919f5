import { forceStop } from "@/lib/agents/mutations";
import { agentParamsSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin"], params: agentParamsSchema },
  ({ params }) => forceStop(getDb(), params.name),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
