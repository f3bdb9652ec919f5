import { betterAuth } from "better-auth";
import { prismaAdapter } from "better-auth/adapters/prisma";
import { getDb } from "../db";
import { env } from "../env";
import { localServerUrl } from "../http/local-url";

export const SESSION_COOKIE_PREFIX = "handshake";
/** The session cookie's name, after any `__Secure-` prefix better-auth adds over https. */
export const SESSION_COOKIE_NAME = `${SESSION_COOKIE_PREFIX}.session_token`;
const SESSION_LIFETIME_SECONDS = 60 * 60 * 24 * 7;

function createAuth() {
  const publicUrl = env.HANDSHAKE_PUBLIC_URL;
  return betterAuth({
    database: prismaAdapter(getDb(), { provider: "postgresql" }),
    secret: env.HANDSHAKE_SECRET,
    // Without a public URL, accept the loopback names a Lead may type (and the bound host), so the
    // console works at localhost and 127.0.0.1 alike.
    baseURL: publicUrl ?? {
      allowedHosts: ["localhost:*", "127.0.0.1:*", "[::1]:*", `${env.HOST}:*`],
      protocol: "http",
      fallback: localServerUrl(env.HOST, env.PORT),
    },
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 12,
      maxPasswordLength: 128,
      autoSignIn: false,
    },
    user: {
      additionalFields: {
        // Never settable from a sign-up body: roles are assigned by a Lead (lib/users).
        role: { type: "string", input: false, defaultValue: "viewer", required: false },
        disabledAt: { type: "date", input: false, required: false },
      },
    },
    databaseHooks: {
      session: {
        create: {
          // The one place every new session passes: a disabled user gets none, whatever the path.
          before: async (session) => {
            const user = await getDb().user.findUnique({
              where: { id: session.userId },
              select: { disabledAt: true },
            });
            return user !== null && user.disabledAt === null;
          },
        },
      },
    },
    session: {
      expiresIn: SESSION_LIFETIME_SECONDS,
      updateAge: 60 * 60 * 24,
    },
    advanced: {
      cookiePrefix: SESSION_COOKIE_PREFIX,
      useSecureCookies: publicUrl?.startsWith("https://") ?? false,
      defaultCookieAttributes: { httpOnly: true, sameSite: "lax" },
    },
    // better-auth's HTTP handler is never mounted: /api/v1/auth/* calls its server API, so its
    // limiter would never see a request.
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
  });
}

export type Auth = ReturnType<typeof createAuth>;

// Created on first use: `next build` imports route modules without a database or secret.
const holder = globalThis as typeof globalThis & { handshakeAuth?: Auth };

export function getAuth(): Auth {
  holder.handshakeAuth ??= createAuth();
  return holder.handshakeAuth;
}
