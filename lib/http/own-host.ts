import { isIP } from "node:net";
import { env } from "../env";

/** The names of this machine wherever it runs, as URLs spell their hostnames. */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

const hostnameOf = (url: string): string | null => URL.parse(url)?.hostname ?? null;

/** `HOST` as a URL spells it; read once, as every request asks. */
const HOST_NAME = hostnameOf(`http://${env.HOST}`);

/**
 * Whether a request's Host (`name:port`) names this server. A page that points its own DNS name
 * at this machine (DNS rebinding) talks to the API as its own origin, Host and Origin both that
 * name, and only the name tells it apart: it could sign in with a guessed password, or spend the
 * sign-in limit's failures until the Lead is locked out. An address is always this machine's,
 * since no page can rebind one; a name must be a loopback name, `HOST`, or the public URL's.
 */
export function isOwnHost(
  host: string,
  publicUrl: string | undefined = env.HANDSHAKE_PUBLIC_URL,
): boolean {
  const hostname = hostnameOf(`http://${host}`);
  if (hostname === null) return false;
  if (LOOPBACK_NAMES.has(hostname) || isIP(hostname.replace(/^\[|\]$/g, "")) !== 0) return true;
  if (hostname === HOST_NAME) return true;
  return publicUrl !== undefined && hostname === hostnameOf(publicUrl);
}
