import type { ReactNode } from "react";
import { ConsoleShell } from "@/components/layout/console-shell";
import { requireHumanSession } from "@/lib/auth/page-session";

// Every console page needs a session; the sign-in page lives outside this group.
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const user = await requireHumanSession();
  return <ConsoleShell user={user}>{children}</ConsoleShell>;
}
