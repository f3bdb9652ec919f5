import { z } from "zod";
import { tokenScopeSchema } from "../shared/auth/scopes";
import { hasDisplayWarning, inspectText } from "../shared/display/visible-text";
import { queryIntegerOr } from "../http/query";

export const createTokenSchema = z.strictObject({
  // Shown wherever the token decides: nothing in it may read differently than it is.
  name: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .refine((name) => !hasDisplayWarning(inspectText(name)), {
      message:
        "token names may not hold control, invisible, right-to-left, stacked or look-alike characters",
    }),
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
