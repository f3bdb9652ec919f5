import { issueWorkerToken } from "@/lib/agents/mutations";
import { agentParamsSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute } from "@/lib/http/route";

export const POST = defineRoute({ access: "lead", params: agentParamsSchema }, ({ params }) =>
  issueWorkerToken(getDb(), params.name),
);
