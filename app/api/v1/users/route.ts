import { createUserSchema } from "@/lib/auth/schema";
import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { createUser } from "@/lib/users/mutations";

export const POST = defineRoute(
  { access: "lead", scopes: ["admin"], body: createUserSchema, status: 201 },
  ({ body }) => createUser(getDb(), body),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
