"use client";

import { useRouter } from "next/navigation";
import { createContext, useContext, useEffect, type ReactNode } from "react";
import { readSessionKey } from "@/lib/shared/auth/session-key";

export type SessionUser = { email: string; name: string; role: "lead" | "viewer" };

const SessionContext = createContext<SessionUser | null>(null);

export function SessionProvider({ user, children }: { user: SessionUser; children: ReactNode }) {
  const router = useRouter();
  useEffect(() => {
    // The cookie rendered this page, but without its key on this origin (a sign-in from before
    // keys, or storage cleared) every call would be refused: sign in again (decision 080).
    if (readSessionKey() === null) router.replace("/sign-in");
  }, [router]);
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
