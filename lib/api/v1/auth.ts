import { loginSchema } from "../../auth/schema";
import { signIn, signOut } from "../../auth/sessions";
import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";

export const login = definePath("/api/v1/auth/login", {
  POST: defineRoute(
    { access: "public", scopes: [], body: loginSchema },
    async ({ body, request }) => {
      const { user, headers } = await signIn(getDb(), body, request.headers);
      return jsonResponse({ user }, { headers });
    },
  ),
});

export const logout = definePath("/api/v1/auth/logout", {
  POST: defineRoute({ access: "human", scopes: [] }, async ({ actor, request }) => {
    const headers = await signOut(getDb(), actor, request.headers);
    return jsonResponse({ ok: true }, { headers });
  }),
});
