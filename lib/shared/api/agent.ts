import { z } from "zod";
import { requestViewSchema } from "./request";

export const agentStatusSchema = z.enum([
  "starting",
  "working",
  "idle",
  "waiting_approval",
  "stopping",
  "shutdown",
  "offline",
  "crashed",
]);

/** A connected Claude Code session (or teammate): where it runs and which model drives it. */
export const connectorSchema = z.object({
  sessionId: z.string(),
  agentId: z.string().nullable(),
  agentType: z.string().nullable(),
  cwd: z.string(),
  model: z.string().nullable(),
  parent: z.string().nullable(),
  parentSessionId: z.string().nullable(),
});

export const agentViewSchema = z.object({
  name: z.string(),
  role: z.string(),
  prompt: z.string().nullable(),
  status: agentStatusSchema,
  gate: z.enum(["not_required", "required", "pending", "approved", "rejected"]),
  workVersion: z.number().int(),
  taskId: z.string().nullable(),
  incarnation: z.number().int(),
  lastHeartbeatAt: z.string().nullable(),
  toolHost: z.enum(["sandboxed", "no_sandbox", "external"]).nullable(),
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
