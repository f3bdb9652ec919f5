/**
 * Security headers for every response (next.config.ts) and the per-request Content Security
 * Policy for pages (proxy.ts). Decision 012 explains the choices.
 */

/**
 * `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` on the
 * console's own same-origin POSTs, which the API's cross-site check would then refuse.
 */
export const STATIC_SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "same-origin" },
  // For browsers that predate CSP's frame-ancestors.
  { key: "X-Frame-Options", value: "DENY" },
] as const;

/** The API's policy: its answers are JSON, so nothing may load from them, run or frame them. */
const API_CONTENT_SECURITY_POLICY =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** API responses are JSON: nothing in them may load, run or be framed (decision 012). */
export const API_RESPONSE_HEADERS: readonly { key: string; value: string }[] = [
  ...STATIC_SECURITY_HEADERS,
  { key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY },
];

/** Sets the API's security headers on an answer, and returns it. */
export function withApiHeaders(response: Response): Response {
  for (const { key, value } of API_RESPONSE_HEADERS) response.headers.set(key, value);
  return response;
}

/** 128 random bits, base64: what a page's inline scripts must carry to run. */
export function createNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Scripts run only with this request's nonce ('strict-dynamic' lets those load Next's chunks), so
 * markup an agent smuggles into a plan cannot run even if a sanitiser missed it. Images load from
 * our own origin only (a plan's remote image is a tracking pixel; components/ui/markdown.tsx
 * renders it as a link anyway); connections go to our own origin (the API and the console socket).
 */
export function buildContentSecurityPolicy(options: { nonce: string; isDev: boolean }): string {
  const { nonce, isDev } = options;
  return [
    "default-src 'self'",
    // React uses eval in development only, to rebuild server error stacks in the browser.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${isDev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' 'nonce-${nonce}'${isDev ? " 'unsafe-inline'" : ""}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
