import { z } from "zod";

export const userRoleSchema = z.enum(["lead", "viewer"]);
export type UserRole = z.infer<typeof userRoleSchema>;

export const emailSchema = z
  .email()
  .max(254)
  .transform((email) => email.toLowerCase());

export const loginSchema = z.strictObject({
  email: emailSchema,
  password: z.string().min(1).max(128),
  /** The `device` an earlier sign-in of this browser answered (lib/auth/device.ts). */
  device: z.string().max(200).optional(),
});
export type LoginInput = z.infer<typeof loginSchema>;

export const createUserSchema = z.strictObject({
  email: emailSchema,
  password: z.string().min(12, "password must be at least 12 characters").max(128),
  role: userRoleSchema,
  name: z.string().trim().min(1).max(100).optional(),
});
export type CreateUserInput = z.infer<typeof createUserSchema>;
