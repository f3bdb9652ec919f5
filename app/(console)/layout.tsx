import type { ReactNode } from "react";
import { ConsoleShell } from "@/components/layout/console-shell";
import { requireHumanSession } from "@/lib/auth/page-session";
import { getDb } from "@/lib/db";
import { findNewestEventId } from "@/lib/events/data";

// Every console page needs a session; the sign-in page lives outside this group.
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const user = await requireHumanSession();
  // Live updates start from the log's position at render time, so nothing between the first
  // data load and the socket connecting is missed.
  const initialEventId = await findNewestEventId(getDb());
  return (
    <ConsoleShell
      user={{ email: user.email, name: user.name, role: user.role }}
      initialEventId={initialEventId}
    >
      {children}
    </ConsoleShell>
  );
}
