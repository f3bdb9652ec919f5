import { getDb } from "@/lib/db";
import { listEventsAfter } from "@/lib/events/data";
import { listEventsQuerySchema } from "@/lib/events/schema";
import { defineRoute, otherMethods } from "@/lib/http/route";

export const GET = defineRoute(
  {
    access: "human",
    scopes: ["admin", "decide", "read", "supervisor"],
    query: listEventsQuerySchema,
  },
  async ({ query }) => {
    const items = await listEventsAfter(getDb(), query.after, query.limit, query.order);
    return { items, nextCursor: items.length === query.limit ? String(items.at(-1)?.id) : null };
  },
);

export const { POST, PUT, PATCH, DELETE } = otherMethods({ GET });
