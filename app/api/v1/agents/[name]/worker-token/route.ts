import { issueWorkerToken } from "@/lib/agents/mutations";
import { agentParamsSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin", "supervisor"], params: agentParamsSchema },
  ({ params }) => issueWorkerToken(getDb(), params.name),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
