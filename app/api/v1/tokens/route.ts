import { getDb } from "@/lib/db";
import { defineRoute } from "@/lib/http/route";
import { createApiToken, createApiTokenSchema } from "@/lib/users/api-tokens";

export const POST = defineRoute(
  { access: "lead", body: createApiTokenSchema, status: 201 },
  ({ actor, body }) => createApiToken(getDb(), actor.userId, body.name),
);
