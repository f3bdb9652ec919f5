import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * A browser that signed in to an account successfully gets this cookie; its later attempts at that
 * account are counted apart from strangers' (lib/auth/sign-in-limit.ts, decision 012). It names a
 * random device id and is signed for one email, so it can be neither forged nor moved to another
 * account, and it grants nothing by itself: the password is still checked.
 */
export const DEVICE_COOKIE_NAME = "handshake.device";
const DEVICE_COOKIE_MAX_AGE_SECONDS = 60 * 60 * 24 * 365;
const DEVICE_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

function signDevice(secret: string, email: string, deviceId: string): string {
  return createHmac("sha256", secret).update(`device\n${email}\n${deviceId}`).digest("base64url");
}

function readCookie(headers: Headers, name: string): string | null {
  for (const part of (headers.get("cookie") ?? "").split(";")) {
    const separator = part.indexOf("=");
    if (separator !== -1 && part.slice(0, separator).trim() === name) {
      return part.slice(separator + 1).trim();
    }
  }
  return null;
}

/** The device id in the request's cookie when it is validly signed for `email`; else null. */
export function readTrustedDevice(headers: Headers, email: string, secret: string): string | null {
  const value = readCookie(headers, DEVICE_COOKIE_NAME);
  const [deviceId, signature, ...rest] = (value ?? "").split(".");
  if (!deviceId || !signature || rest.length > 0 || !DEVICE_ID_PATTERN.test(deviceId)) return null;
  const expected = Buffer.from(signDevice(secret, email, deviceId));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? deviceId : null;
}

/** A Set-Cookie value recognising this browser for `email`, keeping its device id if it had one. */
export function issueDeviceCookie(options: {
  email: string;
  secret: string;
  deviceId: string | null;
  isSecure: boolean;
}): string {
  const deviceId = options.deviceId ?? randomBytes(16).toString("base64url");
  const value = `${deviceId}.${signDevice(options.secret, options.email, deviceId)}`;
  // Only the sign-in route reads it; Strict because no other site has a reason to send it.
  const attributes = [
    `${DEVICE_COOKIE_NAME}=${value}`,
    "Path=/api/v1/auth",
    `Max-Age=${DEVICE_COOKIE_MAX_AGE_SECONDS}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(options.isSecure ? ["Secure"] : []),
  ];
  return attributes.join("; ");
}
