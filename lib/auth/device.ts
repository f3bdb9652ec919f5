import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * A browser that signed in to an account successfully is given this token; its later attempts at
 * that account are counted apart from strangers' (lib/auth/sign-in-limit.ts, decision 012). It
 * names a random device id and is signed for one email, so it can be neither forged nor moved to
 * another account, and it grants nothing by itself: the password is still checked.
 *
 * The console keeps it in localStorage and sends it in the sign-in's body. It was a cookie, and a
 * browser sends a cookie to every port of the host name: a server on another port received it
 * and spent the Lead's own browser's failures (red team, round ten; decision 080).
 */
const DEVICE_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

function signDevice(secret: string, email: string, deviceId: string): string {
  return createHmac("sha256", secret).update(`device\n${email}\n${deviceId}`).digest("base64url");
}

/** The device id in `device` when it is validly signed for `email`; else null. */
export function readTrustedDevice(
  device: string | undefined,
  email: string,
  secret: string,
): string | null {
  const [deviceId, signature, ...rest] = (device ?? "").split(".");
  if (!deviceId || !signature || rest.length > 0 || !DEVICE_ID_PATTERN.test(deviceId)) return null;
  const expected = Buffer.from(signDevice(secret, email, deviceId));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? deviceId : null;
}

/** A device token recognising this browser for `email`, keeping its device id if it had one. */
export function issueDeviceToken(email: string, secret: string, deviceId: string | null): string {
  const id = deviceId ?? randomBytes(16).toString("base64url");
  return `${id}.${signDevice(secret, email, id)}`;
}
