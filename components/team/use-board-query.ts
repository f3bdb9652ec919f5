"use client";

import { usePathname, useSearchParams } from "next/navigation";
import { useMemo, useSyncExternalStore } from "react";
import {
  BOARD_VIEWS,
  formatBoardQuery,
  parseBoardQuery,
  TABLE_VIEW_THRESHOLD,
  type BoardQuery,
  type BoardView,
} from "@/lib/shared/agents/board";

const VIEW_STORAGE_KEY = "handshake.team-view";

/** Same-tab writes; the storage event only tells other tabs. */
const viewListeners = new Set<() => void>();

function subscribeToView(onChange: () => void): () => void {
  viewListeners.add(onChange);
  window.addEventListener("storage", onChange);
  return () => {
    viewListeners.delete(onChange);
    window.removeEventListener("storage", onChange);
  };
}

function readRememberedView(): BoardView | null {
  try {
    const stored = window.localStorage.getItem(VIEW_STORAGE_KEY);
    return (BOARD_VIEWS as readonly string[]).includes(stored ?? "") ? (stored as BoardView) : null;
  } catch {
    return null;
  }
}

/**
 * The board's sort, filters and view live in the URL, so a view can be shared. They are written
 * with history.replaceState, which Next's router follows without a server round trip: typing in
 * the search box must not refetch the page. The view the Lead picks is also remembered in this
 * browser; a URL that names a view wins over it.
 */
export function useBoardQuery(memberCount: number) {
  const params = useSearchParams();
  const pathname = usePathname();
  const query = useMemo(() => parseBoardQuery(params), [params]);
  // null on the server and during hydration: the choice lives in this browser only.
  const rememberedView = useSyncExternalStore(subscribeToView, readRememberedView, () => null);

  const view: BoardView =
    query.view ?? rememberedView ?? (memberCount > TABLE_VIEW_THRESHOLD ? "table" : "cards");

  function update(change: Partial<BoardQuery>) {
    const search = formatBoardQuery({ ...query, ...change });
    window.history.replaceState(null, "", search ? `${pathname}?${search}` : pathname);
  }

  function chooseView(next: BoardView) {
    try {
      window.localStorage.setItem(VIEW_STORAGE_KEY, next);
    } catch {
      // Storage refused (private mode): the choice still holds in the URL.
    }
    for (const listener of viewListeners) listener();
    update({ view: next });
  }

  return { query, view, update, chooseView };
}
