"use client";

import { useDeferredValue, type ReactNode } from "react";

/**
 * Leaves `children` out of its own first render and mounts them in a render React does next, at
 * transition priority: what opens with a card but decides nothing (the agent's facts, its recent
 * activity, who else has the card open) then never holds up the frame that shows the card, nor
 * the row of a request that just arrived (G3.6). Their fetches start a frame later too.
 */
export function AfterFirstRender({ children }: { children: ReactNode }) {
  const isMounted = useDeferredValue(true, false);
  return isMounted ? children : null;
}
