import { randomBytes } from "node:crypto";
import { z } from "zod";
import { API_TOKEN_PREFIX, hashToken } from "../auth/actor";
import type { Db } from "../db";

export const createApiTokenSchema = z.strictObject({ name: z.string().trim().min(1).max(100) });

export type IssuedApiToken = { id: string; name: string; token: string; createdAt: string };

/** A Lead API token for scripts (and the supervisor): shown once, stored as a SHA-256 hash. */
export async function createApiToken(
  db: Db,
  userId: string,
  name: string,
): Promise<IssuedApiToken> {
  const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const row = await db.apiToken.create({ data: { userId, name, tokenHash: hashToken(token) } });
  return { id: row.id, name: row.name, token, createdAt: row.createdAt.toISOString() };
}

/** Replaces every earlier token of that name (e.g. the supervisor's from a previous start). */
export async function rotateApiToken(
  db: Db,
  userId: string,
  name: string,
): Promise<IssuedApiToken> {
  await db.apiToken.updateMany({
    where: { userId, name, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  return createApiToken(db, userId, name);
}
