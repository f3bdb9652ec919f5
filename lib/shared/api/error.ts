import { z } from "zod";

/** Every refusal from /api/v1: a code from the server's closed list, a message, maybe details. */
export const errorBodySchema = z.object({
  error: z.looseObject({ code: z.string(), message: z.string() }),
});
export type ErrorBodyWire = z.infer<typeof errorBodySchema>;
