"use client";

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef, useSyncExternalStore } from "react";
import { useIsHydrated } from "@/components/ui/use-is-hydrated";
import type { BoardMember } from "@/lib/shared/agents/board";
import { AgentCard } from "./agent-card";
import { useOffsetTop } from "./use-offset-top";
import type { RowHandlers } from "./agent-table";

/** The card grid's columns at Tailwind's md and xl breakpoints. */
const WIDE = "(min-width: 80rem)";
const MEDIUM = "(min-width: 48rem)";

function subscribeToWidth(onChange: () => void): () => void {
  const queries = [window.matchMedia(WIDE), window.matchMedia(MEDIUM)];
  for (const query of queries) query.addEventListener("change", onChange);
  return () => {
    for (const query of queries) query.removeEventListener("change", onChange);
  };
}

function columnCount(): number {
  if (window.matchMedia(WIDE).matches) return 3;
  return window.matchMedia(MEDIUM).matches ? 2 : 1;
}

/** The cards, virtualized by line of cards: only the lines on screen are in the DOM. */
export function AgentGrid({
  rows,
  now,
  canAct,
  activeIndex,
  handlers,
}: {
  rows: BoardMember[];
  now: number;
  canAct: boolean;
  activeIndex: number | null;
  handlers: RowHandlers;
}) {
  const columns = useSyncExternalStore(subscribeToWidth, columnCount, () => 3);
  const listRef = useRef<HTMLDivElement>(null);
  const isHydrated = useIsHydrated();
  const scrollMargin = useOffsetTop(listRef);
  const lines = Math.ceil(rows.length / columns);
  const virtualizer = useWindowVirtualizer({
    count: lines,
    estimateSize: () => 340,
    overscan: 2,
    scrollMargin,
    initialRect: { width: 1280, height: 900 },
  });

  useEffect(() => {
    if (activeIndex === null) return;
    virtualizer.scrollToIndex(Math.floor(activeIndex / columns), { align: "auto" });
    const name = rows[activeIndex]?.name;
    const frame = requestAnimationFrame(() =>
      document.querySelector<HTMLElement>(`article[data-agent="${name}"] h2 a`)?.focus(),
    );
    return () => cancelAnimationFrame(frame);
  }, [activeIndex, columns, rows, virtualizer]);

  return (
    <div
      ref={listRef}
      className="relative"
      style={isHydrated ? { height: virtualizer.getTotalSize() } : undefined}
    >
      {virtualizer.getVirtualItems().map((line) => (
        <div
          key={line.key}
          data-index={line.index}
          ref={virtualizer.measureElement}
          className="absolute top-0 left-0 grid w-full gap-4 pb-4 md:grid-cols-2 xl:grid-cols-3"
          style={
            isHydrated ? { transform: `translateY(${line.start - scrollMargin}px)` } : undefined
          }
        >
          {rows.slice(line.index * columns, (line.index + 1) * columns).map((member) => (
            <AgentCard
              key={member.name}
              member={member}
              now={now}
              canAct={canAct}
              onAction={handlers.onAction}
            />
          ))}
        </div>
      ))}
    </div>
  );
}
