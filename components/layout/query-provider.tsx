"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type ReactNode } from "react";
import { forgetSessionKey } from "@/lib/shared/auth/session-key";
import { ApiRequestError } from "@/lib/shared/http/api-fetch";

export function QueryProvider({ children }: { children: ReactNode }) {
  const router = useRouter();
  // One client per browser tab; created in state so a re-render never discards the cache.
  const [client] = useState(() => {
    // A call refused as unauthenticated means this page's session is gone, or its cookie is not
    // the one its key was given with (set by another port of the host, decision 080): sign in
    // again, rather than show every query's error.
    const onError = (error: unknown) => {
      if (error instanceof ApiRequestError && error.code === "UNAUTHENTICATED") {
        forgetSessionKey();
        router.replace("/sign-in");
      }
    };
    return new QueryClient({
      queryCache: new QueryCache({ onError }),
      mutationCache: new MutationCache({ onError }),
      defaultOptions: { queries: { staleTime: 5_000, retry: 1 } },
    });
  });
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
