import { z } from "zod";
import {
  agentStatusSchema,
  connectorSchema,
  gateStateSchema,
  toolHostSchema,
} from "../agents/schema";
import { requestViewSchema } from "./request";

export const agentViewSchema = z.object({
  name: z.string(),
  role: z.string(),
  prompt: z.string().nullable(),
  status: agentStatusSchema,
  gate: gateStateSchema,
  workVersion: z.number().int(),
  taskId: z.string().nullable(),
  incarnation: z.number().int(),
  lastHeartbeatAt: z.string().nullable(),
  toolHost: toolHostSchema.nullable(),
  requirePlan: z.boolean(),
  isForcedStop: z.boolean(),
  connector: connectorSchema.nullable(),
  worker: z.unknown(),
  createdAt: z.string(),
});
export type AgentViewWire = z.infer<typeof agentViewSchema>;

export const agentDetailSchema = agentViewSchema.extend({
  pendingRequests: z.array(requestViewSchema),
});
export type AgentDetailWire = z.infer<typeof agentDetailSchema>;

/** An agent and the token it acts with (register, respawn, worker token, connect session). */
export const registeredAgentSchema = z.object({ agent: agentViewSchema, token: z.string() });
export type RegisteredAgent = z.infer<typeof registeredAgentSchema>;

/** `POST /connect/sessions`: the session's agent; the same answer every time for one session. */
export const connectedSessionSchema = registeredAgentSchema.extend({ created: z.boolean() });
export type ConnectedSession = z.infer<typeof connectedSessionSchema>;
