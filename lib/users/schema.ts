import { z } from "zod";
import { userRoleSchema } from "../auth/schema";

export const userParamsSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "user ids are 1–64 letters, digits, _ or -"),
});

export const updateUserSchema = z
  .strictObject({ role: userRoleSchema.optional(), disabled: z.boolean().optional() })
  .refine((input) => input.role !== undefined || input.disabled !== undefined, {
    message: "send role, disabled or both",
  });
export type UpdateUserInput = z.infer<typeof updateUserSchema>;
