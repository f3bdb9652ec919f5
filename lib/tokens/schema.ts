import { z } from "zod";
import { tokenScopeSchema } from "../shared/auth/scopes";
import { queryIntegerOr } from "../http/query";

export const createTokenSchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scope: tokenScopeSchema,
});
export type CreateTokenInput = z.infer<typeof createTokenSchema>;

export const tokenParamsSchema = z.strictObject({ id: z.uuid("token ids are UUIDs") });

export const listTokensQuerySchema = z.strictObject({
  /** The `nextCursor` of the previous page. */
  cursor: z.uuid("not a cursor this API returned").optional(),
  limit: queryIntegerOr(100, { min: 1, max: 200 }),
});
export type ListTokensQuery = z.infer<typeof listTokensQuerySchema>;
