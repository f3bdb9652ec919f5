import { getDb } from "../../db";
import { listEventsAfter } from "../../events/data";
import { listEventsQuerySchema } from "../../events/schema";
import { defineRoute } from "../../http/route";
import { definePath } from "../../http/router";

export const events = definePath("/api/v1/events", {
  GET: defineRoute(
    {
      access: "human",
      scopes: ["admin", "decide", "read", "supervisor"],
      query: listEventsQuerySchema,
    },
    async ({ query }) => {
      const items = await listEventsAfter(getDb(), query.after, query.limit, query.order);
      return { items, nextCursor: items.length === query.limit ? String(items.at(-1)?.id) : null };
    },
  ),
});
