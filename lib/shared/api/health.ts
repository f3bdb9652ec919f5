import { z } from "zod";

/** `GET /health`: 200 when the database answers, 503 with the same shape when it does not. */
export const healthSchema = z.object({ ok: z.boolean(), db: z.enum(["up", "down"]) });
