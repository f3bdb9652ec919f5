import { NextResponse, type NextRequest } from "next/server";
import { env } from "@/lib/env";
import { buildContentSecurityPolicy, createNonce } from "@/lib/http/security-headers";

/**
 * A fresh nonce per page request. Next reads the policy from the request headers while rendering
 * and puts the nonce on its own scripts; the browser gets the same policy on the response.
 */
export function proxy(request: NextRequest): NextResponse {
  const policy = buildContentSecurityPolicy({
    nonce: createNonce(),
    isDev: env.NODE_ENV === "development",
  });
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  // Pages only: API responses get their static policy from next.config.ts, and static files need
  // none. Prefetches render no HTML of their own.
  matcher: [
    {
      source: "/((?!api/|_next/static|_next/image|favicon.ico).*)",
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
