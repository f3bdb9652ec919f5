import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { sendMessage } from "@/lib/messages/mutations";
import { sendMessageSchema } from "@/lib/messages/schema";

export const POST = defineRoute(
  {
    access: "lead_or_agent",
    scopes: ["admin"],
    body: sendMessageSchema,
    status: 201,
    agentRate: "messages",
  },
  async ({ actor, body }) => {
    const { items } = await sendMessage(getDb(), actor, body);
    return body.to === "*" ? { items, nextCursor: null } : items[0];
  },
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
