import { randomBytes } from "node:crypto";
import { generateId } from "better-auth";
import { hashPassword } from "better-auth/crypto";
import type { CreateUserInput } from "../auth/schema";
import { isUniqueViolation, type Db } from "../db";
import { AppError } from "../errors";

export type UserView = { id: string; email: string; name: string; role: string; createdAt: Date };

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
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      role: user.role,
      createdAt: user.createdAt,
    };
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError("USER_EXISTS", `a user with email ${input.email} already exists`);
    }
    throw error;
  }
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
