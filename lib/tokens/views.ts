import type { ApiToken } from "../generated/prisma/client";
import { tokenScopeSchema, type TokenScope } from "../shared/auth/scopes";

/** A token as listed: never its secret, which is shown once when it is created. */
export type TokenView = {
  id: string;
  name: string;
  scope: TokenScope;
  ownerEmail: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

/** The answer to creating a token: the only time `token` is ever returned. */
export type IssuedToken = {
  id: string;
  name: string;
  scope: TokenScope;
  token: string;
  createdAt: string;
};

export function toTokenView(token: ApiToken & { user: { email: string } }): TokenView {
  return {
    id: token.id,
    name: token.name,
    scope: tokenScopeSchema.parse(token.scope),
    ownerEmail: token.user.email,
    createdAt: token.createdAt.toISOString(),
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
  };
}
