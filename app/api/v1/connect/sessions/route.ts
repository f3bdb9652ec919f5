import { connectSession } from "@/lib/connect/mutations";
import { connectSessionSchema } from "@/lib/connect/schema";
import { getDb } from "@/lib/db";
import { defineRoute, jsonResponse, otherMethods } from "@/lib/http/route";

export const POST = defineRoute(
  { access: "lead", scopes: ["connect"], body: connectSessionSchema },
  async ({ actor, body }) => {
    const { isCreated, ...answer } = await connectSession(getDb(), actor, body);
    return jsonResponse({ ...answer, created: isCreated }, { status: isCreated ? 201 : 200 });
  },
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
