"use client";

import { useEffect, useState } from "react";
import { onServerClockSet, serverNowMs } from "./server-clock";

/**
 * The server's time now, re-rendering every `intervalMs` and when the server's clock is read
 * again, for ages and countdowns that tick.
 */
export function useNow(intervalMs = 1_000): number {
  const [now, setNow] = useState(serverNowMs);
  useEffect(() => {
    const tick = () => setNow(serverNowMs());
    const timer = setInterval(tick, intervalMs);
    const unsubscribe = onServerClockSet(tick);
    // A reading may have come between the first render and this subscription.
    tick();
    return () => {
      clearInterval(timer);
      unsubscribe();
    };
  }, [intervalMs]);
  return now;
}

/** "4:12", "1:02:03": a compact duration for countdowns. */
export function formatClock(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours > 0
    ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}`
    : `${minutes}:${seconds}`;
}

/** "12s", "5m", "3h", "2d": a coarse age. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
