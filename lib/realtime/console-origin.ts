import { env } from "../env";
import { LOOPBACK_NAMES } from "../http/own-host";

const originOf = (url: string): string | null => URL.parse(url)?.origin ?? null;

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
  // Browsers send the serialised origin; anything else (a path, a trailing dot, other casing) is
  // not a browser on our page, so the header must equal the expected origin character for character.
  if (!origin || origin === "null") return false;
  if (publicUrl) return origin === originOf(publicUrl);
  if (!host) return false;
  if (origin !== originOf(`http://${host}`)) return false;
  const { hostname } = new URL(origin);
  return LOOPBACK_NAMES.has(hostname) || hostname === env.HOST;
}
