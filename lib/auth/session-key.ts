import { createHmac, timingSafeEqual } from "node:crypto";
import { hashToken } from "../tokens/credentials";

/**
 * The key a session's calls carry beside its cookie (decision 080): derived from the session's
 * token with the server's secret, so it is stored nowhere and a stolen cookie cannot yield it.
 */
export function sessionKeyOf(sessionToken: string, secret: string): string {
  return createHmac("sha256", secret)
    .update(`console session key\n${sessionToken}`)
    .digest("base64url");
}

/** What an actor remembers of its key: a hash, so the actor cache holds no usable key. */
export function sessionKeyHashOf(sessionToken: string, secret: string): string {
  return hashToken(sessionKeyOf(sessionToken, secret));
}

/** Whether `presented` (a header's or a socket's value, as sent) is the session's key. */
export function presentsSessionKey(keyHash: string, presented: unknown): boolean {
  if (typeof presented !== "string" || presented.length === 0 || presented.length > 100) {
    return false;
  }
  const expected = Buffer.from(keyHash);
  const given = Buffer.from(hashToken(presented));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
