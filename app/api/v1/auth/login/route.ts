import { loginSchema } from "@/lib/auth/schema";
import { signIn } from "@/lib/auth/sessions";
import { getDb } from "@/lib/db";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "public", scopes: [], body: loginSchema },
  async ({ body, request }) => {
    const { user, headers } = await signIn(getDb(), body, request.headers);
    return jsonResponse({ user }, { headers });
  },
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
