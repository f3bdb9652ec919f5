import { z } from "zod";
import { agentNameSchema } from "../agents/schema";

export const REQUEST_STATUSES = [
  "pending",
  "approved",
  "rejected",
  "expired",
  "superseded",
  "cancelled",
] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

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

export const respondSchema = z.strictObject({
  type: typeNameSchema,
  approve: z.boolean(),
  feedback: z.string().trim().max(10_000).optional(),
});
export type RespondInput = z.infer<typeof respondSchema>;

export const requestParamsSchema = z.strictObject({ id: z.string().min(1).max(100) });

export const listRequestsQuerySchema = z.strictObject({
  status: z.enum(REQUEST_STATUSES).optional(),
  type: typeNameSchema.optional(),
  agent: agentNameSchema.optional(),
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type ListRequestsQuery = z.infer<typeof listRequestsQuerySchema>;
