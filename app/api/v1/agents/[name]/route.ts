import { getAgentDetail } from "@/lib/agents/data";
import { agentParamsSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const GET = defineRoute(
  { access: "human", scopes: ["admin", "decide", "read", "supervisor"], params: agentParamsSchema },
  ({ params }) => getAgentDetail(getDb(), params.name),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
