import { agentParamsSchema } from "@/lib/agents/schema";
import { listAgentTimeline, timelineQuerySchema } from "@/lib/agents/timeline";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const GET = defineRoute(
  {
    access: "human",
    scopes: ["admin", "decide", "read"],
    params: agentParamsSchema,
    query: timelineQuerySchema,
  },
  ({ params, query }) => listAgentTimeline(getDb(), params.name, query),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
