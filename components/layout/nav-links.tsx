"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/", label: "Inbox" },
  { href: "/team", label: "Team" },
  { href: "/history", label: "History" },
  { href: "/rules", label: "Rules" },
  { href: "/settings", label: "Settings" },
];

export function NavLinks() {
  const pathname = usePathname();
  return (
    <nav aria-label="Main" className="flex gap-1 text-sm font-medium">
      {LINKS.map((link) => {
        const isCurrent = link.href === "/" ? pathname === "/" : pathname.startsWith(link.href);
        return (
          <Link
            key={link.href}
            href={link.href}
            aria-current={isCurrent ? "page" : undefined}
            className={`rounded-md px-2.5 py-1.5 focus-visible:outline-2 focus-visible:outline-indigo-600 ${isCurrent ? "bg-indigo-50 text-indigo-700" : "text-slate-700 hover:bg-slate-100"}`}
          >
            {link.label}
          </Link>
        );
      })}
    </nav>
  );
}
