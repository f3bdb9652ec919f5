import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { getEventHub } from "@/lib/realtime/event-hub";
import { waitForRequest } from "@/lib/requests/data";
import { getRequestQuerySchema, requestParamsSchema } from "@/lib/requests/schema";

export const GET = defineRoute(
  {
    access: "human_or_agent",
    scopes: ["admin", "decide", "read"],
    params: requestParamsSchema,
    query: getRequestQuerySchema,
  },
  ({ actor, params, query, request }) =>
    waitForRequest(getDb(), getEventHub(), actor, params.id, query, request.signal),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
