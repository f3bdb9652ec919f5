import { z } from "zod";

export const messageViewSchema = z.object({
  id: z.number().int(),
  from: z.string(),
  to: z.string(),
  type: z.string(),
  content: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  incarnation: z.number().int().nullable(),
  cancelledAt: z.string().nullable(),
  createdAt: z.string(),
});
export type MessageViewWire = z.infer<typeof messageViewSchema>;

/** `GET /inbox`: messages after the cursor, and the cursor to ask from next. */
export const inboxSchema = z.object({ messages: z.array(messageViewSchema), cursor: z.number() });
export type Inbox = z.infer<typeof inboxSchema>;
