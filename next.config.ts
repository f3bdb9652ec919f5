import type { NextConfig } from "next";
import { env } from "./lib/env";
import { STATIC_SECURITY_HEADERS } from "./lib/http/security-headers";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  distDir: env.HANDSHAKE_NEXT_DIST_DIR,
  reactStrictMode: true,
  // Loaded from node_modules at run time rather than bundled: native-ish drivers and the
  // generated Prisma runtime behave best unbundled, and server.ts shares them.
  // web-tree-sitter loads its own .wasm and the bash grammar's from node_modules at run time.
  serverExternalPackages: [
    "pg",
    "@prisma/adapter-pg",
    "@prisma/client",
    "better-auth",
    "web-tree-sitter",
    "tree-sitter-bash",
  ],
  typedRoutes: false,
  // Pages get their Content-Security-Policy, with a nonce, from proxy.ts; /api/v1 never reaches
  // Next (server.ts hands it to the API's router, which sets the API's own headers).
  headers: async () => [{ source: "/:path*", headers: [...STATIC_SECURITY_HEADERS] }],
};

export default nextConfig;
