import type { NextConfig } from "next";
import { env } from "./lib/env";

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
  ],
  typedRoutes: false,
};

export default nextConfig;
