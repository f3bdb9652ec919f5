import { followedNowMs, type ClockReading } from "@/lib/shared/time/followed-clock";

/**
 * The server's clock as this tab follows it (decision 084): the database's time the console
 * socket sent when it joined, carried on by the tab's monotonic clock. A Lead's computer whose
 * clock is off by an hour would otherwise count every deadline down an hour wrong, and give a
 * rule "for 30 minutes" an end an hour early or late. Until the first reading, the computer's
 * own clock.
 */
let reading: ClockReading | null = null;
const listeners = new Set<() => void>();

/** Takes the server's time `serverMs` as of now; a reading that is not a time is ignored. */
export function setServerClock(serverMs: unknown): void {
  if (typeof serverMs !== "number" || !Number.isFinite(serverMs)) return;
  reading = { remoteMs: serverMs, monotonicMs: performance.now() };
  for (const listener of listeners) listener();
}

export function serverNowMs(): number {
  return followedNowMs(reading);
}

/** Calls `listener` after each new reading; returns its unsubscribe. */
export function onServerClockSet(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
