import { signOut } from "@/lib/auth/sessions";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";

export const POST = defineRoute({ access: "human", scopes: [] }, async ({ request }) => {
  const headers = await signOut(request.headers);
  return jsonResponse({ ok: true }, { headers });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
