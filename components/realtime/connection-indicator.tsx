"use client";

import { useConnectionState } from "./console-events";

const LABELS = {
  connecting: "Connecting…",
  live: "Live",
  offline: "Offline: reconnecting",
} as const;
const DOTS = {
  connecting: "bg-amber-400",
  live: "bg-emerald-500",
  offline: "bg-rose-500",
} as const;

export function ConnectionIndicator() {
  const state = useConnectionState();
  return (
    <span
      role="status"
      aria-label={`Connection: ${LABELS[state]}`}
      className="inline-flex items-center gap-1.5 text-xs text-slate-600"
    >
      <span aria-hidden className={`h-2 w-2 rounded-full ${DOTS[state]}`} />
      {LABELS[state]}
    </span>
  );
}
