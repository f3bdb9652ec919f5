import { z } from "zod";

export const agentStatusSchema = z.enum([
  "starting",
  "working",
  "idle",
  "waiting_approval",
  "waiting_answer",
  "stopping",
  "shutdown",
  "offline",
  "crashed",
]);
export type AgentStatus = z.infer<typeof agentStatusSchema>;

export const gateStateSchema = z.enum([
  "not_required",
  "required",
  "pending",
  "approved",
  "rejected",
]);
export type GateState = z.infer<typeof gateStateSchema>;

/**
 * Where an agent's tools run: Handshake's bubblewrap sandbox, nowhere (no sandbox on the worker's
 * machine, so bash is refused), or the user's own machine (agents connected from outside).
 */
export const toolHostSchema = z.enum(["sandboxed", "no_sandbox", "external"]);
export type ToolHost = z.infer<typeof toolHostSchema>;

/** Waiting on the Lead: a request of the agent's is pending (the type declares which status). */
export const WAITING_STATUSES: readonly AgentStatus[] = ["waiting_approval", "waiting_answer"];

/** An incarnation that has ended: it can receive nothing and answer nothing. */
export const ENDED_STATUSES: readonly AgentStatus[] = ["shutdown", "crashed"];

export function isAgentActive(status: AgentStatus): boolean {
  return !ENDED_STATUSES.includes(status);
}

/** A status as people read it: "waiting approval", not "waiting_approval". */
export function describeStatus(status: AgentStatus): string {
  return status.replaceAll("_", " ");
}

export const workerConfigSchema = z.strictObject({
  model: z.enum(["scripted", "anthropic"]),
  script: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "script names are [a-z0-9_-]")
    .optional(),
});
export type WorkerConfig = z.infer<typeof workerConfigSchema>;

/**
 * A Claude Code session (or teammate) connected through a `connect` token, as stored in
 * `agents.connector` and shown on the board: where it runs and which model drives it.
 */
export const connectorSchema = z.strictObject({
  sessionId: z.string(),
  /** The teammate's id within the session; null for the session's own agent. */
  agentId: z.string().nullable(),
  agentType: z.string().nullable(),
  cwd: z.string(),
  model: z.string().nullable(),
  /** The agent this one was started from: a teammate's session, or a parent session's agent. */
  parent: z.string().nullable(),
  parentSessionId: z.string().nullable(),
});
export type Connector = z.infer<typeof connectorSchema>;

/** The directory a connected agent was registered in; undefined for a worker or a row in error. */
export function connectorCwdOf(connector: unknown): string | undefined {
  const parsed = connectorSchema.safeParse(connector);
  return parsed.success ? parsed.data.cwd : undefined;
}
