import { z } from "zod";

/** `POST /inbox/ack`: the message id the agent's inbox is now acknowledged up to. */
export const inboxAckSchema = z.object({ ackedUpTo: z.number().int() });
