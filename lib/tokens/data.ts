import type { HumanActor } from "../auth/actor";
import type { Db } from "../db";
import { AppError } from "../errors";
import { isScopeWithinRole, tokenScopeSchema } from "../shared/auth/scopes";
import { userRoleSchema } from "../auth/schema";
import type { ListTokensQuery } from "./schema";
import { toTokenView, type TokenView } from "./views";

/** A Lead (signed in, or with an `admin` token: no other scope reaches these routes) manages every token; anyone else only their own. */
export function canManageAllTokens(actor: HumanActor): boolean {
  return actor.role === "lead";
}

export async function listTokens(
  db: Db,
  actor: HumanActor,
  query: ListTokensQuery,
): Promise<{ items: TokenView[]; nextCursor: string | null }> {
  const rows = await db.apiToken.findMany({
    where: canManageAllTokens(actor) ? {} : { userId: actor.userId },
    include: { user: { select: { email: true } } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: query.limit + 1,
    ...(query.cursor ? { cursor: { id: query.cursor }, skip: 1 } : {}),
  });
  const page = rows.slice(0, query.limit);
  return {
    items: page.map(toTokenView),
    nextCursor: rows.length > query.limit ? (page.at(-1)?.id ?? null) : null,
  };
}

/**
 * Locks an API token and its owner against revocation, disabling and demotion for the rest of the
 * transaction and checks both still allow the token. Revoking takes the token's row lock and a
 * change to the owner the user's, so what a token registers either commits before that change
 * (and is ended by it) or sees it and is refused.
 */
export async function lockLiveApiToken(db: Db, tokenId: string): Promise<void> {
  const [row] = await db.$queryRaw<
    { revokedAt: Date | null; disabledAt: Date | null; scope: string; role: string }[]
  >`
    SELECT t.revoked_at AS "revokedAt", u.disabled_at AS "disabledAt", t.scope, u.role::text AS role
    FROM api_tokens t JOIN users u ON u.id = t.user_id
    WHERE t.id = ${tokenId}::uuid FOR SHARE`;
  if (!row || row.revokedAt || row.disabledAt) {
    throw new AppError("UNAUTHENTICATED", "unknown or revoked token");
  }
  const scope = tokenScopeSchema.parse(row.scope);
  const role = userRoleSchema.parse(row.role);
  if (!isScopeWithinRole(scope, role)) {
    throw new AppError("SCOPE_ABOVE_ROLE", `a ${role} cannot hold a '${scope}' token`);
  }
}

/**
 * A call whose change outlives it (a credential, an account, a role, a rule) holds its caller live
 * until it commits: the caller was read before the handler ran, and a revocation, a disable or a
 * demotion committed in between must refuse it, not be outlived by what it made (decision 017).
 */
export async function lockLiveCaller(db: Db, caller: HumanActor): Promise<void> {
  if (caller.via === "token") {
    await lockLiveApiToken(db, caller.tokenId);
    return;
  }
  const [user] = await db.$queryRaw<{ disabledAt: Date | null; role: string }[]>`
    SELECT disabled_at AS "disabledAt", role::text AS role FROM users
    WHERE id = ${caller.userId} FOR SHARE`;
  if (!user || user.disabledAt) throw new AppError("UNAUTHENTICATED", "this account is disabled");
  if (user.role !== caller.role) {
    throw new AppError("FORBIDDEN", `your role changed to ${user.role} while this call ran`);
  }
}
