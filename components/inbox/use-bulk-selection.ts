"use client";

import { useCallback, useMemo, useRef, useState } from "react";
import type { RequestView } from "@/lib/requests/views";

/**
 * Whether one approve-or-reject may decide this request with others: pending, and not a question,
 * which needs its own answer (the server refuses those per request with NOT_BULK_DECIDABLE too).
 */
export function isBulkDecidable(request: RequestView): boolean {
  return request.status === "pending" && request.type !== "question";
}

/**
 * Ticks or unticks `id` in the order `ids`; with an `anchor` (shift-click), everything between it
 * and `id` follows `id`'s new state, as in a mail client.
 */
export function toggleTicked(
  ticked: ReadonlySet<string>,
  ids: readonly string[],
  id: string,
  anchor: string | null,
): ReadonlySet<string> {
  const to = ids.indexOf(id);
  if (to < 0) return ticked;
  const from = anchor === null ? -1 : ids.indexOf(anchor);
  const range = from < 0 ? [id] : ids.slice(Math.min(from, to), Math.max(from, to) + 1);
  const isTicking = !ticked.has(id);
  const next = new Set(ticked);
  for (const each of range) {
    if (isTicking) next.add(each);
    else next.delete(each);
  }
  return next;
}

/**
 * The requests ticked for a bulk decision. Only ones still decidable and on screen count, so a
 * request decided elsewhere or filtered away drops out of the batch without being unticked.
 */
export function useBulkSelection(visible: readonly RequestView[]) {
  const [ticked, setTicked] = useState<ReadonlySet<string>>(new Set());
  const anchorRef = useRef<string | null>(null);

  const decidable = useMemo(() => visible.filter(isBulkDecidable), [visible]);
  const checkedIds = useMemo(
    () => decidable.filter((request) => ticked.has(request.id)).map((request) => request.id),
    [decidable, ticked],
  );
  const checkedSet = useMemo(() => new Set(checkedIds), [checkedIds]);

  /** Ticks or unticks one; with `isRange`, everything between it and the last one touched too. */
  const toggle = useCallback(
    (id: string, isRange = false) => {
      const ids = decidable.map((request) => request.id);
      const anchor = isRange ? anchorRef.current : null;
      setTicked((current) => toggleTicked(current, ids, id, anchor));
      anchorRef.current = id;
    },
    [decidable],
  );

  const selectAgent = useCallback(
    (agent: string) =>
      setTicked(
        (current) =>
          new Set([
            ...current,
            ...decidable.filter((request) => request.agent === agent).map((request) => request.id),
          ]),
      ),
    [decidable],
  );

  const clear = useCallback(() => setTicked(new Set()), []);

  return { checkedIds, checkedSet, decidable, toggle, selectAgent, clear };
}
