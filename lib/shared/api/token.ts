import { z } from "zod";
import { tokenScopeSchema } from "../auth/scopes";

export const tokenViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  scope: tokenScopeSchema,
  ownerEmail: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type TokenViewWire = z.infer<typeof tokenViewSchema>;

/** The answer to `POST /tokens`: the only time the secret `token` is ever sent. */
export const issuedTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  scope: tokenScopeSchema,
  token: z.string(),
  createdAt: z.string(),
});
export type IssuedTokenWire = z.infer<typeof issuedTokenSchema>;
