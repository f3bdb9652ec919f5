import { env } from "../env";
import { AppError } from "../errors";

/**
 * What an agent may do only so often per minute: POST /messages, /requests, /tool-calls, and the
 * state changes every console socket is sent an event for (a task claimed or released, a
 * heartbeat that changes the agent's status or tool host).
 */
export type AgentRateKind = "messages" | "requests" | "tool_calls" | "state_changes";

const WINDOW_MS = 60_000;

const perMinute: Record<AgentRateKind, () => number> = {
  messages: () => env.HANDSHAKE_AGENT_MESSAGES_PER_MINUTE,
  requests: () => env.HANDSHAKE_AGENT_REQUESTS_PER_MINUTE,
  tool_calls: () => env.HANDSHAKE_AGENT_TOOL_CALLS_PER_MINUTE,
  state_changes: () => env.HANDSHAKE_AGENT_STATE_CHANGES_PER_MINUTE,
};

/** What each agent rate counts, as its refusal says it: made once, not on every counted call. */
const AGENT_RATE_UNITS = Object.fromEntries(
  Object.keys(perMinute).map((kind) => [kind, `${kind.replace("_", " ")} per minute per agent`]),
) as Record<AgentRateKind, string>;

type Window = { startedAt: number; count: number };

/**
 * Counters live in this process, on globalThis (route handlers and server.ts load this module in
 * separate graphs, decision 003): each web node enforces the limits on its own, so N nodes behind a
 * balancer allow up to N times as much. They bound a misbehaving agent's cost; the protocol's
 * invariants never depend on them.
 */
type LimitState = { windows: Map<string, Window>; openLongPolls: Map<string, number> };
const holder = globalThis as typeof globalThis & { handshakeAgentLimits?: LimitState };
function state(): LimitState {
  holder.handshakeAgentLimits ??= { windows: new Map(), openLongPolls: new Map() };
  return holder.handshakeAgentLimits;
}

function rateLimited(message: string, retryAfterSeconds: number): AppError {
  return new AppError("RATE_LIMITED", message, {
    headers: { "retry-after": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
}

/**
 * Counts one call of `kind` by the agent in the current one-minute window, or refuses it with 429
 * RATE_LIMITED and Retry-After (the seconds until the window ends) once the window is full.
 */
export function takeAgentRate(agentId: string, kind: AgentRateKind, now = Date.now()): void {
  openWindow(`${agentId}:${kind}`, perMinute[kind](), AGENT_RATE_UNITS[kind], now).count += 1;
}

/**
 * Refuses one more agent started with a `connect` token (a session or teammate connecting, an agent
 * registered or respawned with it) once the token's minute is full. Ending an agent frees its
 * place under the token's cap, so without a rate a token could start and end agents as fast as
 * HTTP allows, each a row and events on every console (red team, round eleven). The start is
 * counted by `countConnectTokenStart` once it has committed: a call refused or rolled back after
 * this check started nothing.
 */
export function assertConnectTokenMayStart(tokenId: string, now = Date.now()): void {
  const limit = env.HANDSHAKE_CONNECT_STARTS_PER_MINUTE;
  openWindow(connectTokenStartsKey(tokenId), limit, "agent starts per minute per token", now);
}

export function countConnectTokenStart(tokenId: string, now = Date.now()): void {
  currentWindow(connectTokenStartsKey(tokenId), now).count += 1;
}

function connectTokenStartsKey(tokenId: string): string {
  return `connect-token:${tokenId}:starts`;
}

/** The one-minute window of `key` that `now` falls in, begun afresh when the last one is over. */
function currentWindow(key: string, now: number): Window {
  const { windows } = state();
  let window = windows.get(key);
  if (!window || now - window.startedAt >= WINDOW_MS) {
    window = { startedAt: now, count: 0 };
    windows.set(key, window);
  }
  return window;
}

/** The current window of `key`, or a 429 RATE_LIMITED with Retry-After when it is full. */
function openWindow(key: string, limit: number, what: string, now: number): Window {
  const window = currentWindow(key, now);
  if (window.count >= limit) {
    throw rateLimited(`at most ${limit} ${what}`, (window.startedAt + WINDOW_MS - now) / 1000);
  }
  return window;
}

/** What a long-poll waits on: its own inbox, or the decision of one of its requests. */
export type LongPollKind = "inbox" | "request_wait";

const openLongPollLimit: Record<LongPollKind, () => number> = {
  inbox: () => env.HANDSHAKE_AGENT_OPEN_LONG_POLLS,
  // A connected session waits on each of a turn's parallel tool calls at once.
  request_wait: () => env.HANDSHAKE_AGENT_OPEN_REQUEST_WAITS,
};

/** One open long-poll's slot, held until `release`. */
export type LongPollSlot = { release(): void };

/**
 * A taken slot: an object rather than a closure, as a waiting long-poll holds it for its whole
 * wait (issue 18); its key is made again on release rather than kept.
 */
class TakenSlot implements LongPollSlot {
  private isReleased = false;

  constructor(
    private readonly waiterId: string,
    private readonly kind: LongPollKind,
  ) {}

  release(): void {
    if (this.isReleased) return;
    this.isReleased = true;
    const { openLongPolls } = state();
    const key = slotKey(this.waiterId, this.kind);
    const left = (openLongPolls.get(key) ?? 1) - 1;
    if (left > 0) openLongPolls.set(key, left);
    else openLongPolls.delete(key);
  }
}

/**
 * An inbox slot is keyed by the waiter's id itself, a string its cached actor already holds: a
 * key made for each long-poll is a string more for each waiting one (issue 18). Ids hold no ":",
 * so no other kind's key is ever the same.
 */
function slotKey(waiterId: string, kind: LongPollKind): string {
  return kind === "inbox" ? waiterId : `${waiterId}:${kind}`;
}

/**
 * Takes one of the agent's (or, for request waits, a person's) open long-poll slots, or refuses
 * with 429 RATE_LIMITED when all are taken; `release` gives it back, once however often it is
 * called. Each open long-poll holds a socket and a hub subscription, so their number is capped,
 * not their rate.
 */
export function takeLongPollSlot(waiterId: string, kind: LongPollKind = "inbox"): LongPollSlot {
  const { openLongPolls } = state();
  const key = slotKey(waiterId, kind);
  const open = openLongPolls.get(key) ?? 0;
  const limit = openLongPollLimit[kind]();
  if (open >= limit) {
    throw rateLimited(`at most ${limit} open ${kind.replace("_", " ")} long-polls per agent`, 1);
  }
  openLongPolls.set(key, open + 1);
  return new TakenSlot(waiterId, kind);
}
