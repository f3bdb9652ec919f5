import { connectedSessionSchema } from "../../shared/api/agent";
import { connectSession } from "../../connect/mutations";
import { connectSessionSchema } from "../../connect/schema";
import { getDb } from "../../db";
import { defineRoute, jsonResponse } from "../../http/route";
import { definePath } from "../../http/router";

export const connectSessions = definePath("/api/v1/connect/sessions", {
  POST: defineRoute(
    {
      access: "lead",
      scopes: ["connect"],
      body: connectSessionSchema,
      errors: ["RATE_LIMITED"],
      responses: { 200: connectedSessionSchema, 201: connectedSessionSchema },
    },
    async ({ actor, body }) => {
      const { isCreated, ...answer } = await connectSession(getDb(), actor, body);
      return jsonResponse({ ...answer, created: isCreated }, { status: isCreated ? 201 : 200 });
    },
  ),
});
