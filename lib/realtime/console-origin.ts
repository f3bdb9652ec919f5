import { env } from "../env";

const LOOPBACK_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Whether a /console handshake comes from the console's own page. The session cookie is SameSite
 * Lax, and a page on another port of the same host is same-site, so the cookie alone proves
 * nothing: the Origin must be the public URL's, or without one, this very host (a loopback name or
 * HOST, as the sign-in accepts). Browsers always send Origin on a WebSocket handshake, and the
 * console connects over WebSocket only, so a missing or `null` Origin is refused.
 */
export function isConsoleOriginAllowed(
  origin: string | undefined,
  host: string | undefined,
  publicUrl: string | undefined = env.HANDSHAKE_PUBLIC_URL,
): boolean {
  const given = origin ? originOf(origin) : null;
  if (!given) return false;
  if (publicUrl) return given === originOf(publicUrl);
  if (!host) return false;
  const expected = originOf(`http://${host}`);
  if (given !== expected) return false;
  const { hostname } = new URL(given);
  return LOOPBACK_HOSTNAMES.has(hostname) || hostname === env.HOST;
}
