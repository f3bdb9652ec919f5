import { APIError } from "better-auth/api";
import type { Db } from "../db";
import { AppError } from "../errors";
import { getAuth } from "./auth";
import type { LoginInput } from "./schema";
import {
  assertSignInAllowed,
  clearSignInFailures,
  clientIpOf,
  recordSignInFailure,
} from "./sign-in-limit";

export type SignedIn = {
  user: { id: string; email: string; name: string; role: string };
  /** Set-Cookie headers carrying the new session. */
  headers: Headers;
};

export async function signIn(
  db: Db,
  input: LoginInput,
  requestHeaders: Headers,
): Promise<SignedIn> {
  const clientIp = clientIpOf(requestHeaders);
  await assertSignInAllowed(db, input.email, clientIp);
  try {
    const { headers, response } = await getAuth().api.signInEmail({
      body: { email: input.email, password: input.password },
      headers: requestHeaders,
      returnHeaders: true,
    });
    const user = response.user as typeof response.user & { role?: string };
    await clearSignInFailures(db, input.email);
    return {
      user: { id: user.id, email: user.email, name: user.name, role: user.role ?? "viewer" },
      headers,
    };
  } catch (error) {
    if (error instanceof APIError && error.statusCode === 401) {
      await recordSignInFailure(db, input.email, clientIp);
      throw new AppError("INVALID_CREDENTIALS", "email or password is incorrect");
    }
    throw error;
  }
}

/** Ends the session named by the cookie; returns the headers that clear it in the browser. */
export async function signOut(requestHeaders: Headers): Promise<Headers> {
  try {
    const { headers } = await getAuth().api.signOut({
      headers: requestHeaders,
      returnHeaders: true,
    });
    return headers;
  } catch (error) {
    if (error instanceof APIError && error.statusCode < 500) {
      throw new AppError("UNAUTHENTICATED", "not signed in");
    }
    throw error;
  }
}
