import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { createApiToken, createApiTokenSchema } from "@/lib/users/api-tokens";

export const POST = defineRoute(
  { access: "lead", body: createApiTokenSchema, status: 201 },
  ({ actor, body }) => createApiToken(getDb(), actor.userId, body.name),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
