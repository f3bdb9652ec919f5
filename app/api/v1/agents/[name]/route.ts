import { getAgentDetail } from "@/lib/agents/data";
import { agentParamsSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute } from "@/lib/http/route";

export const GET = defineRoute({ access: "human", params: agentParamsSchema }, ({ params }) =>
  getAgentDetail(getDb(), params.name),
);
