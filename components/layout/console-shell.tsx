import Link from "next/link";
import type { ReactNode } from "react";
import { SignOutButton } from "@/components/auth/sign-out-button";

export function ConsoleShell({
  user,
  children,
}: {
  user: { email: string; role: string };
  children: ReactNode;
}) {
  return (
    <div className="min-h-screen">
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
          <Link href="/" className="text-base font-semibold tracking-tight text-indigo-700">
            Handshake
          </Link>
          <nav aria-label="Main" className="flex gap-4 text-sm font-medium text-slate-700">
            <Link href="/" className="hover:text-indigo-700">
              Inbox
            </Link>
          </nav>
          <div className="ml-auto flex items-center gap-3 text-sm text-slate-600">
            <span>
              {user.email}{" "}
              <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs">{user.role}</span>
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <div className="mx-auto max-w-7xl px-4 py-6">{children}</div>
    </div>
  );
}
