import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/auth/sign-out-button";
import { ConnectionIndicator } from "@/components/realtime/connection-indicator";
import { ConsoleEventsProvider } from "@/components/realtime/console-events";
import { SessionProvider, type SessionUser } from "@/components/session/session-context";
import { SessionKeyGuard } from "@/components/session/session-key-guard";
import { NavLinks } from "./nav-links";

export function ConsoleShell({
  user,
  initialEventId,
  children,
}: {
  user: SessionUser;
  initialEventId: number;
  children: ReactNode;
}) {
  return (
    <SessionProvider user={user}>
      <SessionKeyGuard />
      <ConsoleEventsProvider initialEventId={initialEventId}>
        <div className="min-h-screen">
          <header className="border-b border-slate-200 bg-white">
            <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-2.5">
              <Link href="/" className="text-base font-semibold tracking-tight text-indigo-700">
                Handshake
              </Link>
              <NavLinks />
              <div className="ml-auto flex flex-wrap items-center gap-3 text-sm text-slate-600">
                <ConnectionIndicator />
                <span className="hidden sm:inline">{user.email}</span>
                <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs font-medium">
                  {user.role}
                </span>
                <SignOutButton />
              </div>
            </div>
          </header>
          <main className="mx-auto max-w-7xl px-4 py-6">{children}</main>
        </div>
      </ConsoleEventsProvider>
    </SessionProvider>
  );
}
