import { userViewSchema } from "../../shared/api/user";
import { createUserSchema } from "../../auth/schema";
import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { addUser, updateUser } from "../../users/mutations";
import { updateUserSchema, userParamsSchema } from "../../users/schema";

export const users = definePath("/api/v1/users", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      body: createUserSchema,
      status: 201,
      responses: { 201: userViewSchema },
    },
    ({ actor, body }) => addUser(getDb(), actor, body),
  ),
});

export const user = definePath("/api/v1/users/{id}", {
  PATCH: defineRoute(
    {
      access: "lead",
      scopes: ["admin"],
      params: userParamsSchema,
      body: updateUserSchema,
      responses: { 200: userViewSchema },
    },
    ({ actor, params, body }) => updateUser(getDb(), actor, params.id, body),
  ),
});
