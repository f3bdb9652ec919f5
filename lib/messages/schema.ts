import { z } from "zod";
import { queryInteger, queryIntegerOr } from "../http/query";
import { agentNameSchema } from "../agents/schema";
import { PROTOCOL_RESPONSE_TYPES, PROTOCOL_TYPES } from "../protocol/registry";

/** The closed list of message types: plain ones, plus each protocol type and its response. */
export const MESSAGE_TYPES = [
  "message",
  "broadcast",
  "plan_request",
  ...PROTOCOL_TYPES,
  ...PROTOCOL_RESPONSE_TYPES,
];

export const MAX_MESSAGE_LENGTH = 16_000;

export const sendMessageSchema = z.strictObject({
  to: z.union([z.literal("lead"), z.literal("*"), agentNameSchema]),
  content: z.string().trim().min(1, "a message cannot be empty").max(MAX_MESSAGE_LENGTH),
});
export type SendMessageInput = z.infer<typeof sendMessageSchema>;

const cursorSchema = queryInteger({ min: 0, max: Number.MAX_SAFE_INTEGER });

export const inboxQuerySchema = z.strictObject({
  after: cursorSchema.optional(),
  wait: queryIntegerOr(0, { min: 0, max: 30 }),
  limit: queryIntegerOr(100, { min: 1, max: 500 }),
});
export type InboxQuery = z.infer<typeof inboxQuerySchema>;

export const ackSchema = z.strictObject({
  upTo: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
