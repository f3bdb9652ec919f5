import { SignInForm } from "@/components/auth/sign-in-form";
import { findHumanSession } from "@/lib/auth/page-session";

export const metadata = { title: "Sign in · Handshake" };

export default async function SignInPage() {
  const hasSession = (await findHumanSession()) !== null;
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-xl bg-white p-8 shadow-sm ring-1 ring-slate-200">
        <h1 className="text-xl font-semibold tracking-tight">Sign in to Handshake</h1>
        <p className="mt-1 mb-6 text-sm text-slate-600">
          Approve your agents&apos; plans and keep the team in check.
        </p>
        <SignInForm hasSession={hasSession} />
      </div>
    </main>
  );
}
