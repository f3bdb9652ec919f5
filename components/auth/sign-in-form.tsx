"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useState, type FormEvent } from "react";
import { Button } from "@/components/ui/button";
import { TextField } from "@/components/ui/text-field";
import {
  readDevice,
  readSessionKey,
  storeDevice,
  storeSessionKey,
} from "@/lib/shared/auth/session-key";

type ErrorBody = { error?: { message?: string } };
type SignedIn = { sessionKey: string; device: string };

async function postLogin(credentials: { email: string; password: string }): Promise<void> {
  const device = readDevice();
  const response = await fetch("/api/v1/auth/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...credentials, ...(device === null ? {} : { device }) }),
  });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as ErrorBody;
    throw new Error(body.error?.message ?? `sign-in failed (${response.status})`);
  }
  const signedIn = (await response.json()) as SignedIn;
  storeSessionKey(signedIn.sessionKey);
  storeDevice(signedIn.device);
}

/**
 * `hasSession`: the page's request carried a live session cookie. It counts as signed in only
 * with the session's key stored on this origin (decision 080); otherwise the form is shown.
 */
export function SignInForm({ hasSession }: { hasSession: boolean }) {
  const router = useRouter();
  useEffect(() => {
    if (hasSession && readSessionKey() !== null) router.replace("/");
  }, [hasSession, router]);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const login = useMutation({
    mutationFn: postLogin,
    onSuccess: () => {
      router.replace("/");
      router.refresh();
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    login.mutate({ email, password });
  }

  return (
    <form onSubmit={submit} className="space-y-5" aria-label="Sign in">
      <TextField
        label="Email"
        type="email"
        name="email"
        autoComplete="username"
        required
        value={email}
        onChange={(event) => setEmail(event.target.value)}
      />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete="current-password"
        required
        value={password}
        onChange={(event) => setPassword(event.target.value)}
      />
      {login.error && (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700">
          {login.error.message}
        </p>
      )}
      <Button type="submit" className="w-full" disabled={login.isPending}>
        {login.isPending ? "Signing in…" : "Sign in"}
      </Button>
    </form>
  );
}
