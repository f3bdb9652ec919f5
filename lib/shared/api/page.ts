import { z } from "zod";

/** A list answer: one page of items and the cursor to the next page (null on the last). */
export function pageSchema<Item extends z.ZodType>(item: Item) {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}
