import { createUserSchema } from "../../auth/schema";
import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { createUser, updateUser } from "../../users/mutations";
import { updateUserSchema, userParamsSchema } from "../../users/schema";

export const users = definePath("/api/v1/users", {
  POST: defineRoute(
    { access: "lead", scopes: ["admin"], body: createUserSchema, status: 201 },
    ({ body }) => createUser(getDb(), body),
  ),
});

export const user = definePath("/api/v1/users/{id}", {
  PATCH: defineRoute(
    { access: "lead", scopes: ["admin"], params: userParamsSchema, body: updateUserSchema },
    ({ actor, params, body }) => updateUser(getDb(), actor, params.id, body),
  ),
});
