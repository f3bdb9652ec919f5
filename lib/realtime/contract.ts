import { z } from "zod";

/**
 * The typed contract between server.ts and the console over socket.io. Both ends import this file;
 * bump CONSOLE_PROTOCOL_VERSION when a payload changes shape.
 */
export const CONSOLE_NAMESPACE = "/console";
export const CONSOLE_PROTOCOL_VERSION = 1;

export const consoleEventSchema = z.object({
  id: z.number().int().positive(),
  kind: z.string(),
  subject: z.string(),
  at: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type ConsoleEvent = z.infer<typeof consoleEventSchema>;

export const resumeSchema = z.strictObject({
  after: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type ResumePayload = z.infer<typeof resumeSchema>;

export type ConsoleErrorPayload = { code: string; message: string };

export type ServerToClientEvents = {
  event: (event: ConsoleEvent) => void;
  /** Sent after a resume has replayed everything up to `lastId`. */
  resumed: (payload: { lastId: number; version: number }) => void;
  error: (payload: ConsoleErrorPayload) => void;
};

export type ClientToServerEvents = {
  resume: (payload: ResumePayload) => void;
};
