import { queryHot, type Db } from "../db";
import { AppError } from "../errors";
import { AGENT_TOKEN_PREFIX, API_TOKEN_PREFIX, hashToken } from "../tokens/credentials";
import { getActorCache, type ActorTag } from "./actor-cache";
import { getAuth, SESSION_COOKIE_NAME } from "./auth";
import { presentsSessionKey, sessionKeyHashOf } from "./session-key";
import { userRoleSchema, type UserRole } from "./schema";
import { tokenScopeSchema, type TokenScope } from "../shared/auth/scopes";
import { SESSION_KEY_HEADER } from "../shared/auth/session-key";
import { databaseNowMs } from "../database-clock";

type Human = { kind: "human"; userId: string; email: string; name: string; role: UserRole };
/**
 * A human signed in with the session cookie: acts by role, where the call also presents the
 * session's key (`sessionKeyHash`, decision 080).
 */
export type SessionActor = Human & { via: "session"; sessionId: string; sessionKeyHash: string };
/** A human's API token: acts by role and, on top of that, only within its scope. */
export type TokenActor = Human & {
  via: "token";
  tokenId: string;
  tokenName: string;
  scope: TokenScope;
};
export type HumanActor = SessionActor | TokenActor;
export type AgentActor = { kind: "agent"; agentId: string; name: string; incarnation: number };

/** Who is calling: a signed-in human, a human's API token, or an agent holding its token. */
export type Actor = HumanActor | AgentActor;

function bearerToken(headers: Headers): string | null {
  const header = headers.get("authorization");
  if (!header) return null;
  const token = /^Bearer (\S+)$/.exec(header.trim())?.[1];
  if (!token) {
    throw new AppError("UNAUTHENTICATED", "Authorization header must be 'Bearer <token>'");
  }
  if (!/^[A-Za-z0-9_-]{16,200}$/.test(token)) {
    throw new AppError(
      "UNAUTHENTICATED",
      "that is not a Handshake token (16–200 letters, digits, _ and -): was it cut short when copied?",
    );
  }
  return token;
}

// A prepared statement, not Prisma: an agent's first call on a node looks it up, and a team
// reconnecting to a node that just started makes a thousand such calls at once, where Prisma's
// client work cost the caller two to three times the statement's CPU (docs/PERFORMANCE.md, at
// 7d716f4) and the node fell behind (decision 085).
const AGENT_ACTOR_SQL = "SELECT id, name, incarnation FROM agents WHERE token_hash = $1";

async function findAgentActor(db: Db, tokenHash: string): Promise<AgentActor | null> {
  const [agent] = await queryHot<{ id: string; name: string; incarnation: number }>(
    db,
    "agent-actor",
    AGENT_ACTOR_SQL,
    [tokenHash],
  );
  return agent
    ? { kind: "agent", agentId: agent.id, name: agent.name, incarnation: agent.incarnation }
    : null;
}

/** `lastUsedAt` is for people deciding what to revoke: minute precision, not a write per call. */
const LAST_USED_PRECISION_MS = 60_000;

async function findApiTokenActor(db: Db, tokenHash: string): Promise<TokenActor | null> {
  const apiToken = await db.apiToken.findUnique({
    where: { tokenHash },
    include: { user: true },
  });
  if (!apiToken || apiToken.revokedAt || apiToken.user.disabledAt) return null;
  const now = databaseNowMs();
  if (!apiToken.lastUsedAt || now - apiToken.lastUsedAt.getTime() >= LAST_USED_PRECISION_MS) {
    // Conditional, so callers racing on the same token still write once.
    await db.apiToken.updateMany({
      where: {
        id: apiToken.id,
        OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now - LAST_USED_PRECISION_MS) } }],
      },
      data: { lastUsedAt: new Date(now) },
    });
  }
  return {
    kind: "human",
    userId: apiToken.user.id,
    email: apiToken.user.email,
    name: apiToken.user.name,
    role: userRoleSchema.parse(apiToken.user.role),
    via: "token",
    tokenId: apiToken.id,
    tokenName: apiToken.name,
    scope: tokenScopeSchema.parse(apiToken.scope),
  };
}

/**
 * An agent's entry lives past the cache's 10 s backstop (decision 062): it carries no `lastUsedAt`
 * to keep fresh and no expiry to extend, and every column it is read from evicts it by trigger.
 * Five minutes outlasts an idle agent's cadence (a long-poll reissued every 30 s), which the 10 s
 * backstop turned into a lookup per reissue.
 */
const AGENT_ENTRY_TTL_MS = 300_000;

function evictionTagsOf(actor: AgentActor | TokenActor): ActorTag[] {
  return actor.kind === "agent"
    ? [`agent:${actor.agentId}`]
    : [`token:${actor.tokenId}`, `user:${actor.userId}`];
}

async function actorFromToken(db: Db, token: string): Promise<Actor> {
  const tokenHash = hashToken(token);
  // Keyed by the hash, so the cache holds no usable credential. Only found callers are kept: an
  // unknown token costs a lookup every time, and a token minted later is never refused from here.
  const cache = getActorCache<Actor>();
  const cached = cache.get(tokenHash);
  if (cached) return cached;
  const lease = cache.lease();
  // The prefix only says which table to try first (one lookup instead of two for a Lead's
  // decision); a token is still valid only if its hash is found.
  const lookups = token.startsWith(API_TOKEN_PREFIX)
    ? [findApiTokenActor, findAgentActor]
    : [findAgentActor, findApiTokenActor];
  for (const lookup of lookups) {
    const actor = await lookup(db, tokenHash);
    if (actor) {
      cache.set(tokenHash, actor, evictionTagsOf(actor), lease, {
        ttlMs: actor.kind === "agent" ? AGENT_ENTRY_TTL_MS : undefined,
      });
      return actor;
    }
  }
  throw new AppError(
    "UNAUTHENTICATED",
    token.startsWith(AGENT_TOKEN_PREFIX)
      ? "unknown or revoked token: an agent's token stops working when its incarnation ends (stopped, its name registered again, or the token that registered it revoked)"
      : "unknown or revoked token",
  );
}

/** A session's caller, when it began and expires; null when absent, expired or disabled. */
async function readSessionActor(
  headers: Headers,
): Promise<{ actor: SessionActor; createdAt: Date; expiresAt: Date } | null> {
  const auth = getAuth();
  const session = await auth.api.getSession({ headers });
  // Disabling deletes the user's sessions; this also covers one created in the same instant.
  if (!session || (session.user as { disabledAt?: Date | null }).disabledAt) return null;
  const { secret } = await auth.$context;
  return {
    actor: {
      kind: "human",
      userId: session.user.id,
      email: session.user.email,
      name: session.user.name,
      role: userRoleSchema.catch("viewer").parse(session.user.role),
      via: "session",
      sessionId: session.session.id,
      sessionKeyHash: sessionKeyHashOf(session.session.token, secret),
    },
    createdAt: new Date(session.session.createdAt),
    expiresAt: new Date(session.session.expiresAt),
  };
}

/**
 * The human named by the session cookie, read from the database; null when absent, expired or
 * disabled. Sockets and pages read it so: a socket's session check runs when a session event
 * arrives, which may be before this node hears the session's eviction.
 */
export async function actorFromSession(headers: Headers): Promise<SessionActor | null> {
  return (await readSessionActor(headers))?.actor ?? null;
}

/**
 * The Cookie headers to try, one session cookie each. A server on another port of this host can
 * set a session cookie of its own with a longer path, which a browser sends first, and better-auth
 * reads only the first: the Lead's own cookie and key then never counted, and signing in again
 * (with `Path=/`) could not replace it (red team, round ten). Any number: the other port may set
 * several, ahead of the Lead's. The header's size bounds them (16 KiB), and one whose signature is
 * wrong costs a hash, no lookup. One session cookie: the header as is.
 */
function sessionCookieHeaders(cookieHeader: string): string[] {
  const sessionCookies = cookieHeader
    .split(";")
    .map((pair) => pair.trim())
    .filter((pair) => pair.split("=", 1)[0]?.endsWith(SESSION_COOKIE_NAME));
  return sessionCookies.length > 1 ? sessionCookies : [cookieHeader];
}

/**
 * The call's headers once per session cookie, each naming that one alone. None without a cookie:
 * a call that cannot have a session skips building better-auth's context.
 */
function* sessionCandidates(headers: Headers): Generator<{ cookie: string; headers: Headers }> {
  const cookieHeader = headers.get("cookie");
  if (!cookieHeader) return;
  for (const cookie of sessionCookieHeaders(cookieHeader)) {
    const candidate = new Headers(headers);
    candidate.set("cookie", cookie);
    yield { cookie, headers: candidate };
  }
}

/** The first of the Cookie header's sessions `isIt` accepts, with the headers that name it alone. */
async function findSession(
  headers: Headers,
  read: (headers: Headers, cookieHeader: string) => Promise<SessionActor | null>,
  isIt: (actor: SessionActor) => boolean,
): Promise<{ actor: SessionActor; headers: Headers } | null> {
  for (const candidate of sessionCandidates(headers)) {
    const actor = await read(candidate.headers, candidate.cookie);
    if (actor && isIt(actor)) return { actor, headers: candidate.headers };
  }
  return null;
}

/** The session, among those the Cookie header names, whose key the call presents. */
async function keyedSession(
  headers: Headers,
  presentedKey: unknown,
  read: (headers: Headers, cookieHeader: string) => Promise<SessionActor | null>,
): Promise<SessionActor | null> {
  const found = await findSession(headers, read, (actor) =>
    presentsSessionKey(actor.sessionKeyHash, presentedKey),
  );
  return found?.actor ?? null;
}

/**
 * The call's headers with the session cookie of `sessionId` alone, for better-auth, which reads
 * the first session cookie: signing out must end the caller's session, not another cookie's.
 */
export async function headersOfSession(headers: Headers, sessionId: string): Promise<Headers> {
  const found = await findSession(
    headers,
    (candidate) => actorFromSession(candidate),
    (actor) => actor.sessionId === sessionId,
  );
  return found?.headers ?? headers;
}

/**
 * A console socket's person: the session of the handshake's cookies that `presentedKey` belongs
 * to, read from the database as `actorFromSession` reads it.
 */
export function readKeyedSession(
  headers: Headers,
  presentedKey: unknown,
): Promise<SessionActor | null> {
  return keyedSession(headers, presentedKey, (candidate) => actorFromSession(candidate));
}

/**
 * A page's person, for a navigation carries no key: the newest live session among the Cookie
 * header's. A server on another port of this host can set session cookies ahead of the person's
 * own; read as one header, a junk one made every page but the inbox's redirect to sign-in, and
 * signing in again could not mend it (red team, round eleven). A live session of someone else's
 * set there gives way to the person's next sign-in. The page renders nothing the API guards, and
 * its calls still count only the session whose key they carry.
 */
export async function pageSessionActor(headers: Headers): Promise<SessionActor | null> {
  let newest: { actor: SessionActor; createdAt: Date } | null = null;
  for (const candidate of sessionCandidates(headers)) {
    const found = await readSessionActor(candidate.headers);
    if (found && (newest === null || found.createdAt > newest.createdAt)) newest = found;
  }
  return newest?.actor ?? null;
}

/**
 * Where an API call's Cookie header is remembered: a hash of the whole header, the very input
 * better-auth reads, so nothing here decides which of its cookies counts, and the cache holds no
 * usable cookie.
 */
export function sessionCacheKey(cookieHeader: string): string {
  return `cookie:${hashToken(cookieHeader)}`;
}

/**
 * An API call's session, remembered like a token (decision 044): evicted when the session or its
 * user changes, and never past the session's expiry.
 */
async function cachedActorFromSession(
  headers: Headers,
  cookieHeader: string,
): Promise<SessionActor | null> {
  const cache = getActorCache<Actor>();
  const key = sessionCacheKey(cookieHeader);
  const cached = cache.get(key);
  if (cached?.kind === "human" && cached.via === "session") return cached;
  const lease = cache.lease();
  const found = await readSessionActor(headers);
  if (!found) return null;
  const { actor, expiresAt } = found;
  const tags: ActorTag[] = [`session:${actor.sessionId}`, `user:${actor.userId}`];
  cache.set(key, actor, tags, lease, { validUntil: expiresAt.getTime() });
  return actor;
}

/** Resolves the caller from a bearer token or the session cookie; null when anonymous. */
export async function resolveActor(db: Db, headers: Headers): Promise<Actor | null> {
  const token = bearerToken(headers);
  if (token) return actorFromToken(db, token);
  // Without its key, a cookie is what a server on another port of this host name receives from
  // the Lead's browser: anonymous, so public routes such as sign-in still answer.
  return keyedSession(headers, headers.get(SESSION_KEY_HEADER), cachedActorFromSession);
}

/**
 * The headers `resolveActor` reads a caller from, Host among them: better-auth resolves its base
 * URL, and so its cookies, from it. A waiting request keeps these alone to read its caller again
 * when it answers, where the request would hold every header for the whole wait (decision 086).
 */
export type CallerHeaders = {
  readonly authorization: string | null;
  readonly cookie: string | null;
  readonly sessionKey: string | null;
  readonly host: string | null;
};

export function callerHeadersOf(headers: Headers): CallerHeaders {
  return {
    authorization: headers.get("authorization"),
    cookie: headers.get("cookie"),
    sessionKey: headers.get(SESSION_KEY_HEADER),
    host: headers.get("host"),
  };
}

/** `resolveActor` on the headers a waiting request kept. */
export function resolveCallerAgain(db: Db, caller: CallerHeaders): Promise<Actor | null> {
  const headers = new Headers();
  if (caller.authorization !== null) headers.set("authorization", caller.authorization);
  if (caller.cookie !== null) headers.set("cookie", caller.cookie);
  if (caller.sessionKey !== null) headers.set(SESSION_KEY_HEADER, caller.sessionKey);
  if (caller.host !== null) headers.set("host", caller.host);
  return resolveActor(db, headers);
}
