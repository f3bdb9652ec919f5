"use client";

import { createContext, useContext, type ReactNode } from "react";

export type SessionUser = { email: string; name: string; role: "lead" | "viewer" };

const SessionContext = createContext<SessionUser | null>(null);

export function SessionProvider({ user, children }: { user: SessionUser; children: ReactNode }) {
  return <SessionContext.Provider value={user}>{children}</SessionContext.Provider>;
}

export function useSessionUser(): SessionUser {
  const user = useContext(SessionContext);
  if (!user) throw new Error("useSessionUser must be used inside the console layout");
  return user;
}

/** Viewers see everything and can act on nothing: action UI checks this (and the API refuses). */
export function useCanAct(): boolean {
  return useSessionUser().role === "lead";
}
