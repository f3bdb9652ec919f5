import { z } from "zod";
import type { ConsoleEvent } from "../events/catalog";

/**
 * The typed contract between server.ts and the console over socket.io. Both ends import this file;
 * bump CONSOLE_PROTOCOL_VERSION when a payload changes shape.
 */
export const CONSOLE_NAMESPACE = "/console";
export const CONSOLE_PROTOCOL_VERSION = 3;

export type { ConsoleEvent } from "../events/catalog";

export const resumeSchema = z.strictObject({
  after: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type ResumePayload = z.infer<typeof resumeSchema>;

/** `SESSION_ENDED` comes right before the server disconnects the socket: reload to sign in again. */
export type ConsoleErrorPayload = { code: string; message: string };

export type ServerToClientEvents = {
  event: (event: ConsoleEvent) => void;
  /**
   * Answers each resume once everything up to `lastId` is replayed. `isTruncated`: the console was
   * too far behind to replay (MAX_REPLAY_EVENTS); it refetches its data and continues from `lastId`.
   */
  resumed: (payload: { lastId: number; version: number; isTruncated: boolean }) => void;
  error: (payload: ConsoleErrorPayload) => void;
};

export type ClientToServerEvents = {
  resume: (payload: ResumePayload) => void;
};
