import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { listTokens } from "../../tokens/data";
import { createApiToken, revokeApiToken } from "../../tokens/mutations";
import { createTokenSchema, listTokensQuerySchema, tokenParamsSchema } from "../../tokens/schema";

export const tokens = definePath("/api/v1/tokens", {
  GET: defineRoute(
    { access: "human", scopes: ["admin"], query: listTokensQuerySchema },
    ({ actor, query }) => listTokens(getDb(), actor, query),
  ),
  POST: defineRoute(
    { access: "human", scopes: ["admin"], body: createTokenSchema, status: 201 },
    ({ actor, body }) => createApiToken(getDb(), actor.userId, body),
  ),
});

export const token = definePath("/api/v1/tokens/{id}", {
  DELETE: defineRoute(
    { access: "human", scopes: ["admin"], params: tokenParamsSchema },
    ({ actor, params }) => revokeApiToken(getDb(), actor, params.id),
  ),
});
