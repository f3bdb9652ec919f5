import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { ackInbox } from "@/lib/messages/mutations";
import { ackSchema } from "@/lib/messages/schema";

export const POST = defineRoute(
  { access: "agent", scopes: [], body: ackSchema },
  ({ actor, body }) => ackInbox(getDb(), actor.agentId, body.upTo),
);

export const { GET, PUT, PATCH, DELETE } = otherMethods({ POST });
