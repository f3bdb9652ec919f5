import { z } from "zod";

export const userViewSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: z.string(),
  disabled: z.boolean(),
  createdAt: z.string(),
});
export type UserViewWire = z.infer<typeof userViewSchema>;

/**
 * `POST /auth/login`: who signed in, and the session's key; the session itself travels in
 * Set-Cookie, and counts only on a call that also sends the key (decision 080).
 */
export const signedInSchema = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string(), role: z.string() }),
  sessionKey: z.string(),
  /** Sent back in the next sign-in's body: this browser's failures count apart from strangers'. */
  device: z.string(),
});

/** `POST /auth/logout`: the session is over and its cookie cleared. */
export const signedOutSchema = z.object({ ok: z.literal(true) });
