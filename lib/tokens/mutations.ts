import type { HumanActor } from "../auth/actor";
import { endAgentsOwnedBy } from "../agents/mutations";
import { evictActorsAfterCommit } from "../auth/actor-cache";
import { userRoleSchema } from "../auth/schema";
import { isScopeWithinRole } from "../shared/auth/scopes";
import type { Db } from "../db";
import type { PrismaClient } from "../generated/prisma/client";
import { inTransaction } from "../transaction";
import { AppError } from "../errors";
import { hashToken, newApiToken } from "./credentials";
import { canManageAllTokens, lockLiveCaller } from "./data";
import type { CreateTokenInput } from "./schema";
import { toTokenView, type IssuedToken, type TokenView } from "./views";
import { databaseNow } from "../database-clock";

/**
 * An API token for scripts, the supervisor or a connector: shown once, stored as a SHA-256 hash.
 * The owner's role is read here, not taken from the caller, so no path can mint a scope above it.
 */
export async function createApiToken(
  db: Db,
  userId: string,
  input: CreateTokenInput,
): Promise<IssuedToken> {
  const owner = await db.user.findUnique({ where: { id: userId }, select: { role: true } });
  if (!owner) throw new AppError("USER_NOT_FOUND", `no user ${userId}`);
  const role = userRoleSchema.parse(owner.role);
  if (!isScopeWithinRole(input.scope, role)) {
    throw new AppError(
      "SCOPE_ABOVE_ROLE",
      `a ${role} cannot hold a '${input.scope}' token${role === "viewer" ? "; viewers may create 'read' tokens" : ""}`,
    );
  }
  const token = newApiToken();
  const row = await db.apiToken.create({
    data: { userId, name: input.name, scope: input.scope, tokenHash: hashToken(token) },
  });
  return {
    id: row.id,
    name: row.name,
    scope: input.scope,
    token,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A token the caller asked for, issued only while the caller's own credential is live. */
export function issueApiToken(
  db: PrismaClient,
  caller: HumanActor,
  input: CreateTokenInput,
): Promise<IssuedToken> {
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, caller);
    return createApiToken(tx, caller.userId, input);
  });
}

/** Replaces every earlier token of that name (e.g. the supervisor's from a previous start). */
export async function rotateApiToken(
  db: Db,
  userId: string,
  input: CreateTokenInput,
): Promise<IssuedToken> {
  const { count } = await db.apiToken.updateMany({
    where: { userId, name: input.name, revokedAt: null },
    data: { revokedAt: databaseNow() },
  });
  if (count > 0) evictActorsAfterCommit(db, [`user:${userId}`]);
  return createApiToken(db, userId, input);
}

/**
 * Revokes a token: its next call gets 401. Revoking a revoked token returns it unchanged. A token
 * the caller may not manage is reported as unknown, so ids of others' tokens reveal nothing.
 * A `connect` token's agents end with it: their tokens were handed to whoever held it, and
 * revoking it is how a Lead takes back everything that holder could do.
 */
export async function revokeApiToken(
  db: PrismaClient,
  actor: HumanActor,
  id: string,
): Promise<TokenView> {
  const ownerFilter = canManageAllTokens(actor) ? {} : { userId: actor.userId };
  return inTransaction(db, async (tx) => {
    const [revoked] = await tx.apiToken.updateManyAndReturn({
      where: { id, revokedAt: null, ...ownerFilter },
      data: { revokedAt: databaseNow() },
    });
    if (revoked) evictActorsAfterCommit(tx, [`token:${revoked.id}`]);
    if (revoked?.scope === "connect") {
      await endAgentsOwnedBy(tx, revoked.id, "the connect token that registered it was revoked");
    }
    const row = await tx.apiToken.findFirst({
      where: { id, ...ownerFilter },
      include: { user: { select: { email: true } } },
    });
    if (!row) throw new AppError("TOKEN_NOT_FOUND", `no token ${id}`);
    return toTokenView(row);
  });
}
