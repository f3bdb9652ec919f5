import { signOut } from "@/lib/auth/sessions";
import { getDb } from "@/lib/db";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";

export const POST = defineRoute({ access: "human", scopes: [] }, async ({ actor, request }) => {
  const headers = await signOut(getDb(), actor, request.headers);
  return jsonResponse({ ok: true }, { headers });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
