"use client";

import { useCardViewers } from "@/components/realtime/console-events";
import { useSessionUser } from "@/components/session/session-context";

/** The other people who have this card open now, so two Leads do not decide it at cross purposes. */
export function CardViewers({ requestId }: { requestId: string }) {
  const me = useSessionUser();
  const others = useCardViewers(requestId).filter((email) => email !== me.email);
  if (others.length === 0) return null;
  return <p className="text-xs text-indigo-800">Also open by {others.join(", ")}</p>;
}
