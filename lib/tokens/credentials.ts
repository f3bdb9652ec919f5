import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * Every bearer credential the server mints, and how it is stored. A token is shown once and only
 * its hash is kept; resolving one back to a caller is lib/auth/actor.ts.
 */

/** A human's API token starts with this; the prefix only picks the table looked in first. */
export const API_TOKEN_PREFIX = "hs_lead_";

/** Tokens are 256-bit random strings, so a fast hash is enough: nothing to brute-force. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function newApiToken(): string {
  return `${API_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** An agent's token starts with this. */
export const AGENT_TOKEN_PREFIX = "hs_agent_";

export function newAgentToken(): string {
  return `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/**
 * A connected session's agent token, derived rather than random, so every call for the same
 * session (and teammate) and incarnation answers with the same token, also when calls race, with
 * only its hash stored. It is a MAC under the server's secret, so knowing the session id is not
 * knowing the token; a new incarnation (a session resumed after it ended) gets a new one.
 */
export function newConnectorAgentToken(
  secret: string,
  connectorKey: string,
  incarnation: number,
): string {
  const mac = createHmac("sha256", secret)
    .update(`connector-agent-token\n${connectorKey}\n${incarnation}`)
    .digest("base64url");
  return `${AGENT_TOKEN_PREFIX}${mac}`;
}

/** Stored in place of an ended incarnation's token: matches no token anyone holds. */
export function unusableTokenHash(): string {
  return hashToken(`ended:${randomBytes(32).toString("hex")}`);
}
