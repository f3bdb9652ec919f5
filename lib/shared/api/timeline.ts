import { z } from "zod";
import { agentStatusSchema, gateStateSchema } from "../agents/schema";
import { messageViewSchema } from "./message";
import { pageSchema } from "./page";
import { requestViewSchema } from "./request";

export const toolCallViewSchema = z.object({
  id: z.number().int(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  gate: gateStateSchema,
  isAllowed: z.boolean(),
  code: z.string().nullable(),
  reason: z.string().nullable(),
  requestId: z.string().nullable(),
  incarnation: z.number().int(),
});

export const statusChangeSchema = z.object({
  event: z.enum(["registered", "respawned", "updated", "stopped"]),
  incarnation: z.number().int().nullable(),
  status: agentStatusSchema.nullable(),
  gate: gateStateSchema.nullable(),
  reason: z.string().nullable(),
  isForced: z.boolean(),
});

const itemBase = { key: z.string(), at: z.string() };

/** One entry of an agent's history, newest first (`GET /agents/{name}/timeline`). */
export const timelineItemSchema = z.discriminatedUnion("kind", [
  z.object({ ...itemBase, kind: z.literal("message"), message: messageViewSchema }),
  z.object({ ...itemBase, kind: z.literal("tool_call"), toolCall: toolCallViewSchema }),
  z.object({
    ...itemBase,
    kind: z.literal("request"),
    action: z.enum(["created", "decided"]),
    request: requestViewSchema,
  }),
  z.object({ ...itemBase, kind: z.literal("status"), change: statusChangeSchema }),
]);

export const timelinePageSchema = pageSchema(timelineItemSchema);
export type TimelinePageWire = z.infer<typeof timelinePageSchema>;
