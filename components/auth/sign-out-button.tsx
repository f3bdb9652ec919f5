"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { Button } from "@/components/ui/button";

export function SignOutButton() {
  const router = useRouter();
  const signOut = useMutation({
    mutationFn: async () => {
      await fetch("/api/v1/auth/logout", { method: "POST" });
    },
    onSettled: () => {
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
