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

/** `POST /auth/login`: who signed in; the session itself travels in Set-Cookie. */
export const signedInSchema = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string(), role: z.string() }),
});

/** `POST /auth/logout`: the session is over and its cookie cleared. */
export const signedOutSchema = z.object({ ok: z.literal(true) });
