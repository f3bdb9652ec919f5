import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { getRequestForActor } from "@/lib/requests/data";
import { requestParamsSchema } from "@/lib/requests/schema";

export const GET = defineRoute(
  { access: "human_or_agent", scopes: ["admin", "decide", "read"], params: requestParamsSchema },
  ({ actor, params }) => getRequestForActor(getDb(), actor, params.id),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
