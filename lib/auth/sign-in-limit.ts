import type { Db } from "../db";
import { env } from "../env";
import { AppError } from "../errors";
import type { PrismaClient } from "../generated/prisma/client";

/** The header server.ts sets from the socket's address (any incoming copy is discarded first). */
export const CLIENT_IP_HEADER = "x-handshake-client-ip";

export type SignInLimits = {
  windowSeconds: number;
  /** Per account for strangers (all of them together), and per recognised browser. */
  maxFailures: number;
  /** Per client address, across accounts; recognised browsers are not counted here. */
  maxClientFailures: number;
};

export function readSignInLimits(): SignInLimits {
  return {
    windowSeconds: env.HANDSHAKE_SIGN_IN_WINDOW_SECONDS,
    maxFailures: env.HANDSHAKE_SIGN_IN_MAX_FAILURES,
    maxClientFailures: env.HANDSHAKE_SIGN_IN_MAX_CLIENT_FAILURES,
  };
}

export function clientIpOf(headers: Headers): string {
  return headers.get(CLIENT_IP_HEADER) ?? "unknown";
}

export type SignInAttempt = {
  email: string;
  clientIp: string;
  /** The browser's device id when its device token is valid for this email, else null. */
  deviceId: string | null;
};

type Bucket = { lockKey: string; max: number; where: string; params: string[] };

/**
 * The buckets an attempt counts against. A stranger's attempt counts against the account and the
 * client address; an attempt from a browser that signed in to this account before counts only
 * against that browser's own bucket, so strangers' failures (from the same address too) cannot
 * lock the account's owner out, and the owner's typos do not help strangers.
 */
function bucketsOf(attempt: SignInAttempt, limits: SignInLimits): Bucket[] {
  if (attempt.deviceId !== null) {
    return [
      {
        lockKey: `sign-in:device:${attempt.email}:${attempt.deviceId}`,
        max: limits.maxFailures,
        where: "email = $1 AND device_id = $2",
        params: [attempt.email, attempt.deviceId],
      },
    ];
  }
  return [
    {
      lockKey: `sign-in:account:${attempt.email}`,
      max: limits.maxFailures,
      where: "email = $1 AND device_id IS NULL",
      params: [attempt.email],
    },
    {
      lockKey: `sign-in:client:${attempt.clientIp}`,
      max: limits.maxClientFailures,
      where: "client_ip = $1 AND device_id IS NULL",
      params: [attempt.clientIp],
    },
  ];
}

/**
 * Takes a slot for one password check, or refuses with 429 before the password is looked at. The
 * slot is a row inserted under the buckets' advisory locks, so parallel attempts are counted one
 * after another: with a limit of 5, twenty parallel guesses get five checks, not sixteen. The row
 * stays as a failure unless `releaseSignInSlot` deletes it after a right password.
 */
export async function takeSignInSlot(
  db: PrismaClient,
  attempt: SignInAttempt,
  limits: SignInLimits,
): Promise<bigint> {
  const buckets = bucketsOf(attempt, limits);
  return db.$transaction(async (tx) => {
    // Always in the same order (account or device first, then client), so two attempts never
    // wait on each other's second lock.
    for (const bucket of buckets) {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${bucket.lockKey}, 0))`;
    }
    for (const bucket of buckets) {
      const windowParam = `$${bucket.params.length + 1}`;
      const offsetParam = `$${bucket.params.length + 2}`;
      const [oldestCounted] = await tx.$queryRawUnsafe<{ retryAfter: number }[]>(
        `SELECT ceil(extract(epoch FROM created_at + make_interval(secs => ${windowParam}) - now()))::int AS "retryAfter"
           FROM sign_in_failures
          WHERE ${bucket.where} AND created_at > now() - make_interval(secs => ${windowParam})
          ORDER BY created_at DESC, id DESC
         OFFSET ${offsetParam} LIMIT 1`,
        ...bucket.params,
        limits.windowSeconds,
        bucket.max - 1,
      );
      if (oldestCounted) {
        const retryAfter = Math.max(1, oldestCounted.retryAfter);
        throw new AppError(
          "RATE_LIMITED",
          `too many failed sign-ins; try again in ${retryAfter} s`,
          {
            headers: { "retry-after": String(retryAfter) },
            details: { retryAfterSeconds: retryAfter },
          },
        );
      }
    }
    // Stamped by the database (schema.prisma, decision 083), whose clock judges the window.
    const slot = await tx.signInFailure.create({
      data: { email: attempt.email, clientIp: attempt.clientIp, deviceId: attempt.deviceId },
      select: { id: true },
    });
    return slot.id;
  });
}

/**
 * After a right password: the slot was no failure, and the bucket it came from starts afresh (the
 * account's for a stranger's browser, which has just proved it knows the password; the device's
 * own for a recognised one, which leaves strangers' failures counting).
 */
export async function releaseSignInSlot(
  db: Db,
  slotId: bigint,
  attempt: SignInAttempt,
): Promise<void> {
  await db.signInFailure.deleteMany({
    where: {
      OR: [{ id: slotId }, { email: attempt.email, deviceId: attempt.deviceId }],
    },
  });
}

/** A slot whose check never happened (the database failed, say) is no failure either. */
export async function returnSignInSlot(db: Db, slotId: bigint): Promise<void> {
  await db.signInFailure.deleteMany({ where: { id: slotId } });
}

/** Old rows only matter inside the window; trim them as failures are recorded. */
export async function trimSignInFailures(db: Db, limits: SignInLimits): Promise<void> {
  await db.$executeRaw`DELETE FROM sign_in_failures
    WHERE created_at < now() - make_interval(secs => ${limits.windowSeconds})`;
}
