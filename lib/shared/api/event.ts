import { z } from "zod";

/** One audit event; readers check `data` against the kind's own schema before trusting it. */
export const eventSchema = z.object({
  id: z.number().int(),
  kind: z.string(),
  subject: z.string(),
  at: z.string(),
  data: z.unknown(),
});
export type EventWire = z.infer<typeof eventSchema>;
