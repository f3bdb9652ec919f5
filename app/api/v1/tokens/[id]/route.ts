import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { revokeApiToken } from "@/lib/tokens/mutations";
import { tokenParamsSchema } from "@/lib/tokens/schema";

export const DELETE = defineRoute(
  { access: "human", scopes: ["admin"], params: tokenParamsSchema },
  ({ actor, params }) => revokeApiToken(getDb(), actor, params.id),
);

export const { GET, POST, PUT, PATCH } = otherMethods({ DELETE });
