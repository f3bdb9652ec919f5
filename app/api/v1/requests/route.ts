import { getDb } from "@/lib/db";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";
import { listRequests } from "@/lib/requests/data";
import { submitRequest } from "@/lib/requests/mutations";
import { createRequestSchema, listRequestsQuerySchema } from "@/lib/requests/schema";

export const POST = defineRoute(
  { access: "agent", scopes: [], body: createRequestSchema, agentRate: "requests" },
  async ({ actor, body }) => {
    const { request, isCreated } = await submitRequest(getDb(), actor, body);
    return jsonResponse(request, { status: isCreated ? 201 : 200 });
  },
);

export const GET = defineRoute(
  { access: "human", scopes: ["admin", "decide", "read"], query: listRequestsQuerySchema },
  ({ query }) => listRequests(getDb(), query),
);

export const { PUT, PATCH, DELETE } = otherMethods({ GET, POST });
