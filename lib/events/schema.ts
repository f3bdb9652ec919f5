import { z } from "zod";
import { queryIntegerOr } from "../http/query";

export const listEventsQuerySchema = z.strictObject({
  after: queryIntegerOr(0, { min: 0, max: Number.MAX_SAFE_INTEGER }),
  limit: queryIntegerOr(100, { min: 1, max: 500 }),
  /** `desc` with `limit=1` gives the newest id, where a late subscriber starts from. */
  order: z.enum(["asc", "desc"]).default("asc"),
});
