import type { HumanActor } from "../auth/actor";
import type { Db } from "../db";
import { AppError } from "../errors";
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
 * Locks an API token against revocation for the rest of the transaction and checks it is still
 * live. Revoking takes the row's lock too, so what a token registers either commits before the
 * revocation (and is ended by it) or sees the revocation and is refused.
 */
export async function lockLiveApiToken(db: Db, tokenId: string): Promise<void> {
  const [row] = await db.$queryRaw<{ revokedAt: Date | null }[]>`
    SELECT revoked_at AS "revokedAt" FROM api_tokens WHERE id = ${tokenId}::uuid FOR SHARE`;
  if (!row || row.revokedAt) throw new AppError("UNAUTHENTICATED", "unknown or revoked token");
}
