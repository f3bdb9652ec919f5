import { z } from "zod";
import { queryIntegerOr } from "../http/query";
import { agentNameSchema } from "../agents/schema";
import { REQUEST_STATUSES } from "../shared/requests/schema";

const typeNameSchema = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "types are snake_case names");

export const createRequestSchema = z.strictObject({
  type: typeNameSchema,
  payload: z.record(z.string(), z.unknown()).default({}),
  idempotencyKey: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, "idempotency keys are 1–200 printable ASCII characters")
    .optional(),
  timeoutSeconds: z.number().int().min(5).max(86_400).optional(),
});
export type CreateRequestInput = z.infer<typeof createRequestSchema>;

/**
 * Every decision's common fields. The fields a type adds (a question's `answer`) pass through here
 * and are checked against that type's `responseSchema`, which refuses any it does not know.
 */
export const respondSchema = z.looseObject({
  type: typeNameSchema,
  approve: z.boolean(),
  feedback: z.string().trim().max(10_000).optional(),
});
export type RespondInput = z.infer<typeof respondSchema>;

export const requestParamsSchema = z.strictObject({ id: z.string().min(1).max(100) });

export const getRequestQuerySchema = z.strictObject({
  /** Seconds to hold the answer while the request is still pending (a connected session's hook). */
  wait: queryIntegerOr(0, { min: 0, max: 30 }),
});
export type GetRequestQuery = z.infer<typeof getRequestQuerySchema>;

/** `status=approved` or `status=approved,rejected`: history asks for every decided state at once. */
const statusListSchema = z
  .string()
  .transform((list) => list.split(",").map((status) => status.trim()))
  .pipe(z.array(z.enum(REQUEST_STATUSES)).min(1))
  .transform((statuses) => [...new Set(statuses)]);

export const listRequestsQuerySchema = z.strictObject({
  status: statusListSchema.optional(),
  type: typeNameSchema.optional(),
  agent: agentNameSchema.optional(),
  /** Who decided (`respondedBy`): a Lead's email, an agent's name, or `system`. */
  decider: z
    .string()
    .trim()
    .min(1)
    .max(254)
    .transform((decider) => decider.toLowerCase())
    .optional(),
  /** Whom the requests wait on: `lead`, or an agent's name. */
  target: z.union([z.literal("lead"), agentNameSchema]).optional(),
  /**
   * `newest` first (history), or `oldest` first with ties by the earlier deadline (the Lead's
   * inbox: the longest-blocked agent comes first).
   */
  order: z.enum(["newest", "oldest"]).default("newest"),
  cursor: z.string().max(200).optional(),
  limit: queryIntegerOr(50, { min: 1, max: 200 }),
});
export type ListRequestsQuery = z.infer<typeof listRequestsQuerySchema>;

/** The history's filters, and the file format; an unknown format is refused by the export (422). */
export const exportRequestsQuerySchema = listRequestsQuerySchema
  .omit({ order: true, cursor: true, limit: true })
  .extend({ format: z.string().min(1).max(40) });
export type ExportRequestsQuery = z.infer<typeof exportRequestsQuerySchema>;
const bulkDecisionFields = {
  approve: z.boolean(),
  feedback: z.string().trim().max(10_000).optional(),
};

/**
 * One approve-or-reject for several requests: named by id, or every pending one an agent has for
 * the Lead. The ids' count and uniqueness are the domain's to judge (422 INVALID_BATCH), so the
 * caller learns which rule it broke; the body's size cap bounds the array before that.
 */
export const bulkRespondSchema = z.union([
  z.strictObject({ ids: z.array(z.string().min(1).max(100)), ...bulkDecisionFields }),
  z.strictObject({ agent: agentNameSchema, ...bulkDecisionFields }),
]);
export type BulkRespondInput = z.infer<typeof bulkRespondSchema>;

/** Seconds added to a pending request's deadline, a minute to a day at a time. */
export const extendDeadlineSchema = z.strictObject({
  extendSeconds: z.number().int().min(60).max(86_400),
});
export type ExtendDeadlineInput = z.infer<typeof extendDeadlineSchema>;
