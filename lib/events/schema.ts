import { z } from "zod";
import { queryInteger } from "../http/query";

export const listEventsQuerySchema = z.strictObject({
  after: queryInteger({ min: 0, max: Number.MAX_SAFE_INTEGER }).default(0),
  limit: queryInteger({ min: 1, max: 500 }).default(100),
  /** `desc` with `limit=1` gives the newest id, where a late subscriber starts from. */
  order: z.enum(["asc", "desc"]).default("asc"),
});
