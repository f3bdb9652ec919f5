import { z } from "zod";
import type { RequestViewWire } from "../api/request";
import type { ConsoleEvent } from "../events/catalog";
import { REQUEST_ID_PATTERN } from "../requests/schema";

/**
 * The typed contract between server.ts and the console over socket.io. Both ends import this file;
 * bump CONSOLE_PROTOCOL_VERSION when a payload changes shape.
 */
export const CONSOLE_NAMESPACE = "/console";
export const CONSOLE_PROTOCOL_VERSION = 4;

export type { ConsoleEvent } from "../events/catalog";

export const resumeSchema = z.strictObject({
  after: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type ResumePayload = z.infer<typeof resumeSchema>;

/**
 * The card this console shows now (`null`: none). The server knows who the socket is; a client
 * names only a request, never a person.
 */
export const viewingSchema = z.strictObject({
  requestId: z.string().regex(REQUEST_ID_PATTERN, "a request id").nullable(),
});
export type ViewingPayload = z.infer<typeof viewingSchema>;

/** Who has a card open now, across every web node: each person once. */
export type PresencePayload = { requestId: string; viewers: { email: string }[] };

/**
 * A new request's row as `GET /requests/{id}` shows the socket's user, sent after the event that
 * announced `rowFollows` (decision 035) so the inbox adds it without that round trip. `row` is null
 * when it could not be read: the console fetches it then.
 */
export type RequestRowPayload = { requestId: string; row: RequestViewWire | null };

export type ClockPayload = { now: number };

/** `SESSION_ENDED` comes right before the server disconnects the socket: reload to sign in again. */
export type ConsoleErrorPayload = { code: string; message: string };

export type ServerToClientEvents = {
  /**
   * `rowFollows`: a `requestRow` for this event's request comes next on this socket; only live,
   * only with a `request.created` for the Lead, only to a Lead's socket (decision 035). Without it
   * (a replay, a viewer) the console fetches the row.
   */
  event: (event: ConsoleEvent, rowFollows?: true) => void;
  /** The row an `event` with `rowFollows` announced, read once per node after it was sent. */
  requestRow: (payload: RequestRowPayload) => void;
  /**
   * Answers each resume once everything up to `lastId` is replayed. `isTruncated`: the console was
   * too far behind to replay (MAX_REPLAY_EVENTS); it refetches its data and continues from `lastId`.
   */
  resumed: (payload: { lastId: number; version: number; isTruncated: boolean }) => void;
  error: (payload: ConsoleErrorPayload) => void;
  /** Sent to every console when a card's viewers change, and to one that opens the card. */
  presence: (payload: PresencePayload) => void;
  /**
   * The database's time when the socket joined, in ms since the epoch: the console counts down
   * deadlines and sets rules' ends by it, not by the computer's own clock (decision 084).
   */
  clock: (payload: ClockPayload) => void;
};

export type ClientToServerEvents = {
  resume: (payload: ResumePayload) => void;
  viewing: (payload: ViewingPayload) => void;
};
