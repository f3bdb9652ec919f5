"use client";

import { useSyncExternalStore } from "react";

const subscribeToNothing = () => () => {};

/**
 * Whether the page has hydrated: a style computed on the page is given only then
 * (`style={isHydrated ? … : undefined}`). The server's HTML then carries no `style` attribute,
 * which the console's CSP refuses (`style-src` has no 'unsafe-inline'; refused ones left the team
 * table's rows at the wrong height), while React sets a style on the page through the CSSOM, which
 * the CSP allows.
 */
export function useIsHydrated(): boolean {
  return useSyncExternalStore(
    subscribeToNothing,
    () => true,
    () => false,
  );
}
