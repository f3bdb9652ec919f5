import { z } from "zod";

/**
 * The variables the agents' side reads (the supervisor and its workers), declared once: lib/env.ts
 * adds them to the server's schema (npm start passes them on), agents/env.ts reads only these, so an
 * agent process never parses, or needs, a database URL or a secret.
 */
export const agentEnvSchema = z.object({
  /**
   * Where `npm start` keeps the embedded database and the generated secret, and the supervisor its
   * agents' workspaces.
   */
  HANDSHAKE_DATA_DIR: z.string().min(1).default(".data"),
  /** Worker and supervisor: the server they call, like any external agent. */
  HANDSHAKE_URL: z.url().optional(),
  /** Worker: the folder its file tools and bash are confined to. */
  HANDSHAKE_WORKSPACE: z.string().min(1).optional(),
  /** Worker: where it persists its state on a graceful shutdown (outside the workspace). */
  HANDSHAKE_STATE_FILE: z.string().min(1).optional(),
  HANDSHAKE_MODEL: z.enum(["scripted", "anthropic"]).default("scripted"),
  HANDSHAKE_SCRIPT: z.string().min(1).optional(),
  HANDSHAKE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  /** bubblewrap, which sandboxes every bash call; without it bash is refused, never run bare. */
  HANDSHAKE_BWRAP_PATH: z.string().min(1).default("/usr/bin/bwrap"),
  /** Host uid/gid bash runs as when the worker is root (root ignores RLIMIT_NPROC). */
  HANDSHAKE_SANDBOX_UID: z.coerce.number().int().min(1).max(4_294_967_294).default(61_000),
  HANDSHAKE_SANDBOX_GID: z.coerce.number().int().min(1).max(4_294_967_294).default(61_000),
  /** Per bash call: CPU seconds per process, address space, processes, largest file, /tmp. */
  HANDSHAKE_SANDBOX_CPU_SECONDS: z.coerce.number().int().min(1).max(3_600).default(60),
  HANDSHAKE_SANDBOX_MEMORY_MB: z.coerce.number().int().min(64).max(1_048_576).default(4_096),
  HANDSHAKE_SANDBOX_PROCESSES: z.coerce.number().int().min(4).max(100_000).default(256),
  HANDSHAKE_SANDBOX_FILE_MB: z.coerce.number().int().min(1).max(1_048_576).default(512),
  HANDSHAKE_SANDBOX_TMP_MB: z.coerce.number().int().min(1).max(1_048_576).default(256),
  /** Disk an agent's workspace may use; over it, bash runs with writes disabled. */
  HANDSHAKE_WORKSPACE_QUOTA_MB: z.coerce.number().int().min(1).max(10_485_760).default(2_048),
  ANTHROPIC_BASE_URL: z.url().optional(),
  ANTHROPIC_MODEL: z.string().min(1).default("claude-sonnet-4-5"),
});
export type AgentEnv = z.infer<typeof agentEnvSchema>;

/** Parses an environment against a schema, naming every bad variable at once. */
export function parseEnv<T extends z.ZodObject>(
  schema: T,
  source: Record<string, string | undefined>,
): z.infer<T> {
  // Empty strings mean "unset" (a blank line in a .env file must not become a value).
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ""));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${issue.path.join(".")}: ${issue.message}`)
      .join("\n");
    throw new Error(`Invalid environment configuration:\n${problems}`);
  }
  return parsed.data;
}

const SANDBOX_VARIABLES = [
  "HANDSHAKE_BWRAP_PATH",
  "HANDSHAKE_SANDBOX_UID",
  "HANDSHAKE_SANDBOX_GID",
  "HANDSHAKE_SANDBOX_CPU_SECONDS",
  "HANDSHAKE_SANDBOX_MEMORY_MB",
  "HANDSHAKE_SANDBOX_PROCESSES",
  "HANDSHAKE_SANDBOX_FILE_MB",
  "HANDSHAKE_SANDBOX_TMP_MB",
  "HANDSHAKE_WORKSPACE_QUOTA_MB",
] as const satisfies readonly (keyof AgentEnv)[];

/** The sandbox settings the user gave, to pass on to the supervisor and its workers (no secrets). */
export function pickSandboxSettings(
  source: Record<string, string | undefined>,
): Record<string, string> {
  return Object.fromEntries(
    SANDBOX_VARIABLES.flatMap((name) => {
      const value = source[name];
      return value ? [[name, value]] : [];
    }),
  );
}
