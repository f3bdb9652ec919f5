import { signedInSchema, signedOutSchema } from "../../shared/api/user";
import { loginSchema } from "../../auth/schema";
import { signIn, signOut } from "../../auth/sessions";
import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";

export const login = definePath("/api/v1/auth/login", {
  POST: defineRoute(
    {
      access: "public",
      scopes: [],
      body: loginSchema,
      errors: ["INVALID_CREDENTIALS", "USER_DISABLED", "RATE_LIMITED"],
      responses: { 200: signedInSchema },
    },
    async ({ body, request }) => {
      const { user, sessionKey, device, headers } = await signIn(getDb(), body, request.headers);
      return jsonResponse({ user, sessionKey, device }, { headers });
    },
  ),
});

export const logout = definePath("/api/v1/auth/logout", {
  POST: defineRoute(
    { access: "human", scopes: [], responses: { 200: signedOutSchema } },
    async ({ actor, request }) => {
      const headers = await signOut(getDb(), actor, request.headers);
      return jsonResponse({ ok: true }, { headers });
    },
  ),
});
