/**
 * A browser sends the session cookie to every port of the console's host name, so a server on
 * another port of that name receives it (red-team round ten). The cookie alone therefore signs in
 * nobody at the API or the console socket: each call also carries the session key its sign-in
 * answered with, which the console keeps in localStorage, scoped to its own origin, port included
 * (decision 080).
 */
export const SESSION_KEY_HEADER = "x-handshake-session-key";

/** The localStorage item the console keeps it in. */
export const SESSION_KEY_STORAGE_NAME = "handshake.sessionKey";

function browserStorage(): Storage | null {
  return typeof window === "undefined" ? null : window.localStorage;
}

/** The key of this origin's session, or null before a sign-in on this origin. */
export function readSessionKey(): string | null {
  return browserStorage()?.getItem(SESSION_KEY_STORAGE_NAME) ?? null;
}

export function storeSessionKey(key: string): void {
  browserStorage()?.setItem(SESSION_KEY_STORAGE_NAME, key);
}

export function forgetSessionKey(): void {
  browserStorage()?.removeItem(SESSION_KEY_STORAGE_NAME);
}

/**
 * The sign-in's device token (lib/auth/device.ts), kept here for the same reason: as a cookie it
 * reached every port of the host name.
 */
const DEVICE_STORAGE_NAME = "handshake.device";

export function readDevice(): string | null {
  return browserStorage()?.getItem(DEVICE_STORAGE_NAME) ?? null;
}

export function storeDevice(device: string): void {
  browserStorage()?.setItem(DEVICE_STORAGE_NAME, device);
}
