import { loginSchema } from "@/lib/auth/schema";
import { signIn } from "@/lib/auth/sessions";
import { defineRoute, jsonResponse } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "public", body: loginSchema },
  async ({ body, request }) => {
    const { user, headers } = await signIn(body, request.headers);
    return jsonResponse({ user }, { headers });
  },
);
