"use client";

import { useEffect, useRef } from "react";
import { Button } from "@/components/ui/button";

const SHORTCUTS = [
  ["j", "next request"],
  ["k", "previous request"],
  ["a", "approve the selected request"],
  ["r", "reject (or decline a question): focuses feedback, Enter sends"],
  ["1–9", "answer the selected question with that option"],
  ["x", "tick or untick the selected request for a bulk decision"],
  ["Shift-click", "tick every request between the last ticked and this one"],
  ["/", "filter requests"],
  ["?", "show or hide this list"],
  ["Esc", "close / leave a field"],
] as const;

export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => closeRef.current?.focus(), []);
  return (
    <div
      className="fixed inset-0 z-20 flex items-center justify-center bg-slate-900/40 p-4"
      onClick={onClose}
    >
      <div
        role="dialog"
        aria-modal="true"
        aria-labelledby="shortcuts-title"
        className="w-full max-w-sm rounded-xl bg-white p-5 shadow-lg"
        onClick={(event) => event.stopPropagation()}
        onKeyDown={(event) => {
          if (event.key === "Escape" || event.key === "?") onClose();
        }}
      >
        <h2 id="shortcuts-title" className="text-base font-semibold">
          Keyboard shortcuts
        </h2>
        <dl className="mt-3 space-y-1.5 text-sm">
          {SHORTCUTS.map(([key, action]) => (
            <div key={key} className="flex gap-3">
              <dt>
                <kbd className="rounded border border-slate-300 bg-slate-50 px-1.5 font-mono text-xs">
                  {key}
                </kbd>
              </dt>
              <dd className="text-slate-700">{action}</dd>
            </div>
          ))}
        </dl>
        <Button ref={closeRef} variant="secondary" className="mt-4" onClick={onClose}>
          Close
        </Button>
      </div>
    </div>
  );
}
