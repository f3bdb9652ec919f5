import type { HumanActor } from "../auth/actor";
import type { Db } from "../db";
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
