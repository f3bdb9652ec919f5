"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";
import { readSessionKey } from "@/lib/shared/auth/session-key";

/**
 * The cookie rendered this page, but without its key on this origin (a sign-in from before keys,
 * or storage cleared) every call would be refused: sign in again (decision 080).
 */
export function SessionKeyGuard() {
  const router = useRouter();
  useEffect(() => {
    if (readSessionKey() === null) router.replace("/sign-in");
  }, [router]);
  return null;
}
