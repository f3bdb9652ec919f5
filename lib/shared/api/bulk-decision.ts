import { z } from "zod";
import { requestViewSchema } from "./request";

/** One request's outcome in a bulk decision: decided (as stored), or why not. */
export const bulkDecisionResultSchema = z.discriminatedUnion("ok", [
  z.strictObject({ id: z.string(), ok: z.literal(true), request: requestViewSchema }),
  z.strictObject({
    id: z.string(),
    ok: z.literal(false),
    error: z.strictObject({ code: z.string(), message: z.string() }),
  }),
]);
export type BulkDecisionResult = z.infer<typeof bulkDecisionResultSchema>;

/** Every request of a bulk decision, in the order asked (or oldest first for an agent's). */
export const bulkDecisionSchema = z.strictObject({ results: z.array(bulkDecisionResultSchema) });
export type BulkDecision = z.infer<typeof bulkDecisionSchema>;
