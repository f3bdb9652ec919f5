import "@fontsource-variable/inter";
import "./globals.css";
import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import { QueryProvider } from "@/components/layout/query-provider";

export const metadata: Metadata = {
  title: "Handshake",
  description: "Approval console for teams of AI agents",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request: its scripts need this request's CSP nonce (proxy.ts), which a
  // page prerendered at build time could not carry.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen font-sans">
        <QueryProvider>{children}</QueryProvider>
      </body>
    </html>
  );
}
