import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { updateUser } from "@/lib/users/mutations";
import { updateUserSchema, userParamsSchema } from "@/lib/users/schema";

export const PATCH = defineRoute(
  { access: "lead", scopes: ["admin"], params: userParamsSchema, body: updateUserSchema },
  ({ actor, params, body }) => updateUser(getDb(), actor, params.id, body),
);

export const { GET, POST, PUT, DELETE } = otherMethods({ PATCH });
