import { pageSchema } from "../../shared/api/page";
import { issuedTokenSchema, tokenViewSchema } from "../../shared/api/token";
import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { listTokens } from "../../tokens/data";
import { issueApiToken, revokeApiToken } from "../../tokens/mutations";
import { createTokenSchema, listTokensQuerySchema, tokenParamsSchema } from "../../tokens/schema";

export const tokens = definePath("/api/v1/tokens", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin"],
      query: listTokensQuerySchema,
      responses: { 200: pageSchema(tokenViewSchema) },
    },
    ({ actor, query }) => listTokens(getDb(), actor, query),
  ),
  POST: defineRoute(
    {
      access: "human",
      scopes: ["admin"],
      body: createTokenSchema,
      status: 201,
      responses: { 201: issuedTokenSchema },
    },
    ({ actor, body }) => issueApiToken(getDb(), actor, body),
  ),
});

export const token = definePath("/api/v1/tokens/{id}", {
  DELETE: defineRoute(
    {
      access: "human",
      scopes: ["admin"],
      params: tokenParamsSchema,
      responses: { 200: tokenViewSchema },
    },
    ({ actor, params }) => revokeApiToken(getDb(), actor, params.id),
  ),
});
