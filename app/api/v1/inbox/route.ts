import { getDb } from "@/lib/db";
import { defineRoute, otherMethods } from "@/lib/http/route";
import { readInbox } from "@/lib/messages/data";
import { inboxQuerySchema } from "@/lib/messages/schema";
import { getEventHub } from "@/lib/realtime/event-hub";

export const GET = defineRoute(
  { access: "agent", scopes: [], query: inboxQuerySchema },
  ({ actor, query, request }) => readInbox(getDb(), getEventHub(), actor, query, request.signal),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
