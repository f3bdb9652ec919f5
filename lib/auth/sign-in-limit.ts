import type { Db } from "../db";
import { AppError } from "../errors";

export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_EMAIL = 5;
export const MAX_FAILURES_PER_CLIENT = 30;

/** The header server.ts sets from the socket's address (any incoming copy is discarded first). */
export const CLIENT_IP_HEADER = "x-handshake-client-ip";

export function clientIpOf(headers: Headers): string {
  return headers.get(CLIENT_IP_HEADER) ?? "unknown";
}

/**
 * Refuses a sign-in attempt before the password is even checked when either the account or the
 * client has failed too often recently, so guessing stays slow whichever one an attacker varies.
 */
export async function assertSignInAllowed(
  db: Db,
  email: string,
  clientIp: string,
  now = new Date(),
): Promise<void> {
  const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
  const limits = [
    { where: { email, createdAt: { gt: since } }, max: MAX_FAILURES_PER_EMAIL },
    { where: { clientIp, createdAt: { gt: since } }, max: MAX_FAILURES_PER_CLIENT },
  ];
  for (const { where, max } of limits) {
    const recent = await db.signInFailure.findMany({
      where,
      orderBy: { createdAt: "desc" },
      take: max,
      select: { createdAt: true },
    });
    const oldestCounted = recent[max - 1];
    if (oldestCounted) {
      const retryAfter = Math.max(
        1,
        Math.ceil((oldestCounted.createdAt.getTime() + SIGN_IN_WINDOW_MS - now.getTime()) / 1000),
      );
      throw new AppError("RATE_LIMITED", `too many failed sign-ins; try again in ${retryAfter} s`, {
        headers: { "retry-after": String(retryAfter) },
        details: { retryAfterSeconds: retryAfter },
      });
    }
  }
}

export async function recordSignInFailure(db: Db, email: string, clientIp: string): Promise<void> {
  await db.signInFailure.create({ data: { email, clientIp } });
  // Old rows only matter inside the window; trim them as we go.
  await db.signInFailure.deleteMany({
    where: { createdAt: { lt: new Date(Date.now() - SIGN_IN_WINDOW_MS) } },
  });
}

export async function clearSignInFailures(db: Db, email: string): Promise<void> {
  await db.signInFailure.deleteMany({ where: { email } });
}
