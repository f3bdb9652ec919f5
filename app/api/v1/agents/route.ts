import { listTeamMembers } from "@/lib/agents/data";
import { registerAgent } from "@/lib/agents/mutations";
import { listAgentsQuerySchema, registerAgentSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin", "connect"], body: registerAgentSchema, status: 201 },
  ({ actor, body }) => registerAgent(getDb(), body, actor),
);

export const GET = defineRoute(
  {
    access: "human",
    scopes: ["admin", "decide", "read", "supervisor"],
    query: listAgentsQuerySchema,
  },
  async ({ query }) => ({
    items: await listTeamMembers(getDb(), query),
    nextCursor: null,
  }),
);

export const { PUT, PATCH, DELETE } = otherMethods({ GET, POST });
