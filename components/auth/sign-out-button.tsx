"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { Button } from "@/components/ui/button";
import { forgetSessionKey } from "@/lib/shared/auth/session-key";
import { consoleFetch } from "@/lib/shared/http/api-fetch";

export function SignOutButton() {
  const router = useRouter();
  const signOut = useMutation({
    mutationFn: async () => {
      await consoleFetch("/auth/logout", { method: "POST" });
    },
    onSettled: () => {
      forgetSessionKey();
      router.replace("/sign-in");
      router.refresh();
    },
  });
  return (
    <Button variant="ghost" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
      Sign out
    </Button>
  );
}
