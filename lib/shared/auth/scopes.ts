import { z } from "zod";
import type { UserRole } from "../../auth/schema";

/**
 * What an API token may do, one scope per token. Routes declare which scopes may call them
 * (defineRoute's `scopes`); a signed-in human acts by role and is not scoped.
 * - `admin`: everything its owner (a Lead) can do;
 * - `decide`: read, and decide requests;
 * - `read`: the GET routes a viewer may use;
 * - `connect`: register agents of its own, receive their tokens, respawn only those;
 * - `supervisor`: only what agents/supervisor.ts calls (read events and agents, issue worker
 *   tokens, report exits, respawn an existing agent).
 */
export const TOKEN_SCOPES = ["admin", "decide", "read", "connect", "supervisor"] as const;
export const tokenScopeSchema = z.enum(TOKEN_SCOPES);
export type TokenScope = z.infer<typeof tokenScopeSchema>;

const SCOPES_BY_ROLE: Record<UserRole, readonly TokenScope[]> = {
  lead: TOKEN_SCOPES,
  viewer: ["read"],
};

export function scopesForRole(role: UserRole): readonly TokenScope[] {
  return SCOPES_BY_ROLE[role];
}

/** A token never acts above its owner's role, also after the owner was downgraded. */
export function isScopeWithinRole(scope: TokenScope, role: UserRole): boolean {
  return SCOPES_BY_ROLE[role].includes(scope);
}
