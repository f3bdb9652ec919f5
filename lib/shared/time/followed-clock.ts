/**
 * Another machine's clock read once: its time then, and when that was on this process's
 * monotonic clock (`performance.now()`).
 */
export type ClockReading = { remoteMs: number; monotonicMs: number };

/**
 * The other machine's time now, as a reading follows it: the reading plus how long ago it was on
 * the monotonic clock, so that this machine's wall clock, however far off or stepped while it
 * runs, moves nothing. Whole milliseconds, as `Date.now()` gives. Before any reading it is this
 * machine's own clock.
 */
export function followedNowMs(reading: ClockReading | null): number {
  if (!reading) return Date.now();
  return Math.round(reading.remoteMs + (performance.now() - reading.monotonicMs));
}
