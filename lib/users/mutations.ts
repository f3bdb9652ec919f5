import { randomBytes } from "node:crypto";
import { generateId } from "better-auth";
import { hashPassword } from "better-auth/crypto";
import type { HumanActor } from "../auth/actor";
import { endAgentsOwnedBy } from "../agents/mutations";
import { evictActorsAfterCommit } from "../auth/actor-cache";
import { userRoleSchema, type CreateUserInput } from "../auth/schema";
import { isUniqueViolation, type Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import type { PrismaClient, User } from "../generated/prisma/client";
import { isScopeWithinRole } from "../shared/auth/scopes";
import { lockLiveCaller } from "../tokens/data";
import { inTransaction } from "../transaction";
import type { UpdateUserInput } from "./schema";
import { databaseNow } from "../database-clock";

export type UserView = {
  id: string;
  email: string;
  name: string;
  role: string;
  disabled: boolean;
  createdAt: Date;
};

function toUserView(user: User): UserView {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    disabled: user.disabledAt !== null,
    createdAt: user.createdAt,
  };
}

export async function createUser(db: Db, input: CreateUserInput): Promise<UserView> {
  // Hashed with better-auth's own scheme, so its sign-in verifies the password; written here
  // rather than through its sign-up endpoint so `db` (possibly a transaction) is honoured and the
  // role is set in the same statement.
  const passwordHash = await hashPassword(input.password);
  const userId = generateId(32);
  try {
    const user = await db.user.create({
      data: {
        id: userId,
        email: input.email,
        name: input.name ?? input.email,
        emailVerified: true,
        role: input.role,
        accounts: {
          create: {
            id: generateId(32),
            accountId: userId,
            providerId: "credential",
            password: passwordHash,
          },
        },
      },
    });
    return toUserView(user);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError("USER_EXISTS", `a user with email ${input.email} already exists`);
    }
    throw error;
  }
}

/** An account a Lead adds, only while that Lead (or their token) may still add one. */
export function addUser(
  db: PrismaClient,
  by: HumanActor,
  input: CreateUserInput,
): Promise<UserView> {
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, by);
    return createUser(tx, input);
  });
}

const ACTIVE_LEADS_LOCK = "users:active-leads";

/**
 * A Lead changes someone's role or disables them. The last active Lead can be neither demoted nor
 * disabled (nobody could decide anything again); every change to who is an active Lead takes one
 * lock, so two Leads demoting each other at once cannot both succeed. Disabling deletes the
 * user's sessions; the event tells every web node to drop that user's console sockets.
 */
export async function updateUser(
  db: PrismaClient,
  by: HumanActor,
  userId: string,
  input: UpdateUserInput,
): Promise<UserView> {
  return inTransaction(db, async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${ACTIVE_LEADS_LOCK}, 0))`;
    await lockLiveCaller(tx, by);
    const user = await tx.user.findUnique({ where: { id: userId } });
    if (!user) throw new AppError("USER_NOT_FOUND", `no user ${userId}`);
    const role = input.role ?? user.role;
    const isDisabled = input.disabled ?? user.disabledAt !== null;
    const isActiveLead = user.role === "lead" && user.disabledAt === null;
    if (isActiveLead && (role !== "lead" || isDisabled)) {
      const otherActiveLeads = await tx.user.count({
        where: { role: "lead", disabledAt: null, id: { not: userId } },
      });
      if (otherActiveLeads === 0) {
        throw new AppError(
          "LAST_ACTIVE_LEAD",
          `${user.email} is the last active Lead; make someone else a Lead first`,
        );
      }
    }
    const isChanged = role !== user.role || isDisabled !== (user.disabledAt !== null);
    if (!isChanged) return toUserView(user);
    const updated = await tx.user.update({
      where: { id: userId },
      data: { role, disabledAt: isDisabled ? (user.disabledAt ?? databaseNow()) : null },
    });
    evictActorsAfterCommit(tx, [`user:${userId}`]);
    if (isDisabled) await tx.session.deleteMany({ where: { userId } });
    // The agents a connect token registered end once its owner may no longer hold it, as when it is
    // revoked (decision 017): their tokens were handed to whoever held it.
    if (isDisabled || !isScopeWithinRole("connect", userRoleSchema.parse(role))) {
      const connectTokens = await tx.apiToken.findMany({
        where: { userId, scope: "connect", revokedAt: null },
        select: { id: true },
        orderBy: { id: "asc" },
      });
      for (const { id } of connectTokens) {
        await endAgentsOwnedBy(
          tx,
          id,
          isDisabled
            ? "the owner of the connect token that registered it was disabled"
            : "the owner of the connect token that registered it may no longer hold it",
        );
      }
    }
    await appendEvent(tx, "user.updated", `user:${userId}`, {
      userId,
      role,
      disabled: isDisabled,
      by: by.email,
    });
    return toUserView(updated);
  });
}

export type FirstLeadResult =
  | { isCreated: true; email: string; password: string; isPasswordGenerated: boolean }
  | { isCreated: false; email: string | null };

export const DEFAULT_LEAD_EMAIL = "lead@handshake.local";

/**
 * Makes sure someone can sign in on a fresh install. With HANDSHAKE_ADMIN_EMAIL the named Lead is
 * created if missing (an existing account keeps its password); without it, a Lead with a generated
 * password is created when there is no Lead at all, and the caller prints the password once.
 */
export async function ensureFirstLead(
  db: Db,
  admin: { email?: string | undefined; password?: string | undefined },
): Promise<FirstLeadResult> {
  const email = admin.email?.toLowerCase();
  if (email) {
    const existing = await db.user.findUnique({ where: { email } });
    if (existing) return { isCreated: false, email };
  } else {
    const anyLead = await db.user.findFirst({
      where: { role: "lead" },
      orderBy: { createdAt: "asc" },
    });
    if (anyLead) return { isCreated: false, email: anyLead.email };
  }
  const password = admin.password ?? randomBytes(18).toString("base64url");
  const leadEmail = email ?? DEFAULT_LEAD_EMAIL;
  await createUser(db, { email: leadEmail, password, role: "lead", name: "Lead" });
  return { isCreated: true, email: leadEmail, password, isPasswordGenerated: !admin.password };
}
