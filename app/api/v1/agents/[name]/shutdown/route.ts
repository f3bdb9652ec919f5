import { findAgentByName } from "@/lib/agents/data";
import { agentParamsSchema, shutdownAgentSchema } from "@/lib/agents/schema";
import { getDb } from "@/lib/db";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";
import { sendLeadRequest } from "@/lib/requests/mutations";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin"], params: agentParamsSchema, body: shutdownAgentSchema },
  async ({ params, body }) => {
    const agent = await findAgentByName(getDb(), params.name);
    const { request, isCreated } = await sendLeadRequest(getDb(), agent.id, {
      type: "shutdown",
      payload: body.reason ? { reason: body.reason } : {},
      timeoutSeconds: body.timeoutSeconds,
    });
    return jsonResponse(request, { status: isCreated ? 201 : 200 });
  },
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
