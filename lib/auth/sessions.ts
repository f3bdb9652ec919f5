import { APIError } from "better-auth/api";
import type { Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import type { PrismaClient } from "../generated/prisma/client";
import { headersOfSession, type HumanActor } from "./actor";
import { evictActorsAfterCommit } from "./actor-cache";
import { getAuth } from "./auth";
import { issueDeviceToken, readTrustedDevice } from "./device";
import { sessionKeyOf } from "./session-key";
import type { LoginInput } from "./schema";
import {
  clientIpOf,
  readSignInLimits,
  releaseSignInSlot,
  returnSignInSlot,
  takeSignInSlot,
  trimSignInFailures,
  type SignInAttempt,
} from "./sign-in-limit";

export type SignedIn = {
  user: { id: string; email: string; name: string; role: string };
  /** What every call of the session carries beside its cookie (decision 080). */
  sessionKey: string;
  /** What this browser sends with its next sign-in to be counted apart from strangers. */
  device: string;
  /** Set-Cookie headers carrying the new session. */
  headers: Headers;
};

function hasErrorCode(error: APIError, code: string): boolean {
  return (error.body as { code?: unknown } | undefined)?.code === code;
}

export async function signIn(
  db: PrismaClient,
  input: LoginInput,
  requestHeaders: Headers,
): Promise<SignedIn> {
  const limits = readSignInLimits();
  const { secret } = await getAuth().$context;
  const attempt: SignInAttempt = {
    email: input.email,
    clientIp: clientIpOf(requestHeaders),
    deviceId: readTrustedDevice(input.device, input.email, secret),
  };
  const slotId = await takeSignInSlot(db, attempt, limits);
  let signedIn;
  try {
    signedIn = await getAuth().api.signInEmail({
      body: { email: input.email, password: input.password },
      headers: requestHeaders,
      returnHeaders: true,
    });
  } catch (error) {
    // The session hook (lib/auth/auth.ts) refuses disabled users after the password matched.
    if (error instanceof APIError && hasErrorCode(error, "FAILED_TO_CREATE_SESSION")) {
      await returnSignInSlot(db, slotId);
      throw new AppError("USER_DISABLED", "this account is disabled; ask a Lead");
    }
    if (error instanceof APIError && error.statusCode === 401) {
      await trimSignInFailures(db, limits);
      throw new AppError("INVALID_CREDENTIALS", "email or password is incorrect");
    }
    await returnSignInSlot(db, slotId);
    throw error;
  }
  const { headers, response } = signedIn;
  await releaseSignInSlot(db, slotId, attempt);
  const user = response.user as typeof response.user & { role?: string };
  return {
    user: { id: user.id, email: user.email, name: user.name, role: user.role ?? "viewer" },
    sessionKey: sessionKeyOf(response.token, secret),
    device: issueDeviceToken(input.email, secret, attempt.deviceId),
    headers,
  };
}

/**
 * Ends the session named by the cookie; returns the headers that clear it in the browser. The
 * event tells every web node to re-check its console sockets now rather than at the next sweep.
 */
export async function signOut(
  db: Db,
  actor: HumanActor,
  requestHeaders: Headers,
): Promise<Headers> {
  try {
    const { headers } = await getAuth().api.signOut({
      headers:
        actor.via === "session"
          ? await headersOfSession(requestHeaders, actor.sessionId)
          : requestHeaders,
      returnHeaders: true,
    });
    // At once here; other nodes hear it from the sessions trigger (migration 023).
    if (actor.via === "session") evictActorsAfterCommit(db, [`session:${actor.sessionId}`]);
    await appendEvent(db, "session.ended", `user:${actor.userId}`, { userId: actor.userId });
    return headers;
  } catch (error) {
    if (error instanceof APIError && error.statusCode < 500) {
      throw new AppError("UNAUTHENTICATED", "not signed in");
    }
    throw error;
  }
}
