import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { listTokens } from "@/lib/tokens/data";
import { createApiToken } from "@/lib/tokens/mutations";
import { createTokenSchema, listTokensQuerySchema } from "@/lib/tokens/schema";

export const POST = defineRoute(
  { access: "human", scopes: ["admin"], body: createTokenSchema, status: 201 },
  ({ actor, body }) => createApiToken(getDb(), actor.userId, body),
);

export const GET = defineRoute(
  { access: "human", scopes: ["admin"], query: listTokensQuerySchema },
  ({ actor, query }) => listTokens(getDb(), actor, query),
);

export const { PUT, PATCH, DELETE } = otherMethods({ GET, POST });
