import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { decideRequest } from "@/lib/requests/mutations";
import { requestParamsSchema, respondSchema } from "@/lib/requests/schema";

export const POST = defineRoute(
  {
    access: "lead_or_agent",
    scopes: ["admin", "decide"],
    params: requestParamsSchema,
    body: respondSchema,
  },
  ({ actor, params, body }) => decideRequest(getDb(), actor, params.id, body),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
