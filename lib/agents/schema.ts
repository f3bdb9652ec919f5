import { z } from "zod";
import { toolHostSchema, workerConfigSchema } from "../shared/agents/schema";

export const RESERVED_AGENT_NAMES = ["lead", "agent"] as const;

/**
 * Agent names are addresses: lower-cased on the way in (so uniqueness is case-insensitive), then
 * held to a conservative charset that is safe in paths, URLs and logs.
 */
export const agentNameSchema = z
  .string()
  .max(40, "agent names are at most 40 characters")
  .transform((name) => name.toLowerCase())
  .pipe(
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "agent names are [a-z0-9][a-z0-9_-]{0,39}")
      .refine((name) => !(RESERVED_AGENT_NAMES as readonly string[]).includes(name), {
        message: "'lead' and 'agent' are reserved names",
      }),
  );

export const registerAgentSchema = z.strictObject({
  name: agentNameSchema,
  role: z.string().trim().min(1).max(100),
  prompt: z.string().max(20_000).optional(),
  requirePlan: z.boolean().optional(),
  taskId: z.uuid().optional(),
  worker: workerConfigSchema.optional(),
});
export type RegisterAgentInput = z.infer<typeof registerAgentSchema>;

export const agentParamsSchema = z.strictObject({ name: agentNameSchema });

/** `GET /agents?name=`: one row of the board, for a board patching itself after an event. */
export const listAgentsQuerySchema = z.strictObject({
  name: agentNameSchema.optional(),
  /**
   * Agents that ended, or are offline with nothing pending: `recent` (the default) the 500 that
   * went last, `all` every one.
   */
  gone: z.enum(["recent", "all"]).optional(),
});

export const reasonSchema = z.strictObject({ reason: z.string().trim().max(2_000).optional() });

export const shutdownAgentSchema = z.strictObject({
  reason: z.string().trim().max(2_000).optional(),
  timeoutSeconds: z.number().int().min(5).max(86_400).optional(),
});

/** Statuses an agent may report about itself; the rest are set by the server or supervisor. */
export const heartbeatSchema = z.strictObject({
  /**
   * `ended`: a connected session ended (Claude Code's SessionEnd), or another agent exited after
   * its shutdown was approved; any other agent saying it is refused.
   */
  status: z.enum(["working", "idle", "waiting_approval", "waiting_answer", "stopping", "ended"]),
  taskId: z.uuid().nullable().optional(),
  toolHost: toolHostSchema.optional(),
});
export type HeartbeatInput = z.infer<typeof heartbeatSchema>;

export const workerExitSchema = z.strictObject({
  incarnation: z.number().int().min(1),
  exitCode: z.number().int().min(-1).max(255).nullable(),
  signal: z
    .string()
    .regex(/^SIG[A-Z0-9]{1,10}$/)
    .nullable(),
  reason: z.string().trim().max(500).optional(),
});
export type WorkerExitInput = z.infer<typeof workerExitSchema>;
