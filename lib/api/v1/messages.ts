import { getDb } from "../../db";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";
import { readInbox } from "../../messages/data";
import { ackInbox, sendMessage } from "../../messages/mutations";
import { ackSchema, inboxQuerySchema, sendMessageSchema } from "../../messages/schema";
import { getEventHub } from "../../realtime/event-hub";

export const messages = definePath("/api/v1/messages", {
  POST: defineRoute(
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
  ),
});

export const inbox = definePath("/api/v1/inbox", {
  GET: defineRoute(
    { access: "agent", scopes: [], query: inboxQuerySchema },
    ({ actor, query, request }) => readInbox(getDb(), getEventHub(), actor, query, request.signal),
  ),
});

export const inboxAck = definePath("/api/v1/inbox/ack", {
  POST: defineRoute({ access: "agent", scopes: [], body: ackSchema }, ({ actor, body }) =>
    ackInbox(getDb(), actor.agentId, body.upTo),
  ),
});
