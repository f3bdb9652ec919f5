import { z } from "zod";
import { inboxAckSchema } from "../../shared/api/inbox-ack";
import { inboxSchema, messageViewSchema } from "../../shared/api/message";
import { pageSchema } from "../../shared/api/page";
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
      // One message to one recipient; a page of them for a broadcast (`to: "*"`).
      responses: { 201: z.union([messageViewSchema, pageSchema(messageViewSchema)]) },
    },
    async ({ actor, body }) => {
      const { items } = await sendMessage(getDb(), actor, body);
      const [sent] = items;
      return body.to === "*" || sent === undefined ? { items, nextCursor: null } : sent;
    },
  ),
});

export const inbox = definePath("/api/v1/inbox", {
  GET: defineRoute(
    {
      access: "agent",
      scopes: [],
      query: inboxQuerySchema,
      // Open long-polls are capped per agent.
      errors: ["RATE_LIMITED"],
      responses: { 200: inboxSchema },
      waits: true,
    },
    ({ actor, query, clientGone }) => readInbox(getDb(), getEventHub(), actor, query, clientGone),
  ),
});

export const inboxAck = definePath("/api/v1/inbox/ack", {
  POST: defineRoute(
    { access: "agent", scopes: [], body: ackSchema, responses: { 200: inboxAckSchema } },
    ({ actor, body }) => ackInbox(getDb(), actor, body.upTo),
  ),
});
