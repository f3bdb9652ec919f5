import { respawnAgent } from "@/lib/agents/mutations";
import { agentParamsSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  {
    access: "lead",
    scopes: ["admin", "supervisor", "connect"],
    params: agentParamsSchema,
    status: 201,
  },
  ({ actor, params }) => respawnAgent(getDb(), params.name, actor),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
