"use client";

import { useLayoutEffect, useState, type RefObject } from "react";

/**
 * The element's distance from the top of the document, kept current: a window virtualizer needs
 * it as its scroll margin, and it moves whenever something above the list grows or shrinks
 * (a bulk-action bar, an error). Any such change resizes the body, so the body is what we watch.
 */
export function useOffsetTop(ref: RefObject<HTMLElement | null>): number {
  const [top, setTop] = useState(0);
  useLayoutEffect(() => {
    const observer = new ResizeObserver(() =>
      setTop((ref.current?.getBoundingClientRect().top ?? 0) + window.scrollY),
    );
    observer.observe(document.body);
    return () => observer.disconnect();
  }, [ref]);
  return top;
}
