import { z } from "zod";

// The only reader of process.env. Every variable is listed here with its meaning; README's
// configuration table mirrors this schema.
const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** PostgreSQL connection URL. Without it `npm start` boots an embedded PostgreSQL. */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** Admin connection the test suite uses to create and drop its scratch databases. */
  TEST_ADMIN_DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/ })
    .default("postgresql://postgres@127.0.0.1:5432/postgres"),
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Signs session cookies. `npm start` generates one under the data directory when unset. */
  HANDSHAKE_SECRET: z.string().min(32).optional(),
  /** The URL people use to reach the console, when it differs from http://HOST:PORT. */
  HANDSHAKE_PUBLIC_URL: z.url().optional(),
  HANDSHAKE_ADMIN_EMAIL: z.email().optional(),
  /** Sign-in limits (lib/auth/sign-in-limit.ts): the sliding window the counts below cover. */
  HANDSHAKE_SIGN_IN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** Failed sign-ins per account per window (strangers' together; each recognised browser apart). */
  HANDSHAKE_SIGN_IN_MAX_FAILURES: z.coerce.number().int().min(1).max(1_000).default(5),
  /** Failed sign-ins per client address per window, across accounts. */
  HANDSHAKE_SIGN_IN_MAX_CLIENT_FAILURES: z.coerce.number().int().min(1).max(10_000).default(30),
  HANDSHAKE_ADMIN_PASSWORD: z.string().min(12).max(128).optional(),
  /** Where `npm start` keeps the embedded database and the generated secret. */
  HANDSHAKE_DATA_DIR: z.string().min(1).default(".data"),
  HANDSHAKE_EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).default(54329),
  CHROMIUM_PATH: z.string().min(1).default("/usr/bin/chromium"),
  /** Where `next build` writes; a second checkout of the e2e suite can run beside the first. */
  HANDSHAKE_NEXT_DIST_DIR: z
    .string()
    .regex(/^\.next(-[a-z0-9-]+)?$/)
    .default(".next"),
  /** Port of the e2e suite's server. */
  E2E_PORT: z.coerce.number().int().min(1024).max(65535).default(3210),
  /** Worker and supervisor: the server they call, like any external agent. */
  HANDSHAKE_URL: z.url().optional(),
  /**
   * An external agent's token (tests/support/idempotent-agent.ts). Supervised workers never get
   * theirs this way: the supervisor hands it over an inherited pipe (agents/secrets-pipe.ts).
   */
  HANDSHAKE_AGENT_TOKEN: z.string().min(16).optional(),
  /** Worker: the folder its file tools and bash are confined to. */
  HANDSHAKE_WORKSPACE: z.string().min(1).optional(),
  /** Worker: where it persists its state on a graceful shutdown (outside the workspace). */
  HANDSHAKE_STATE_FILE: z.string().min(1).optional(),
  HANDSHAKE_MODEL: z.enum(["scripted", "anthropic"]).default("scripted"),
  HANDSHAKE_SCRIPT: z.string().min(1).optional(),
  /**
   * Per-agent limits (429 RATE_LIMITED with Retry-After), counted per web node. The defaults sit
   * well above what the benchmarks and the soak do per agent.
   */
  HANDSHAKE_AGENT_MESSAGES_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  HANDSHAKE_AGENT_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  HANDSHAKE_AGENT_TOOL_CALLS_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  HANDSHAKE_AGENT_OPEN_LONG_POLLS: z.coerce.number().int().min(1).default(4),
  /**
   * A connected Claude Code session sends nothing between tool calls; after this much silence it
   * is marked offline (it comes back with its next call). Workers go offline after 30 s.
   */
  HANDSHAKE_CONNECTOR_SILENCE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(2_592_000)
    .default(21_600),
  /** Open `GET /requests/{id}?wait=` long-polls per agent: one per parallel tool call it waits on. */
  HANDSHAKE_AGENT_OPEN_REQUEST_WAITS: z.coerce.number().int().min(1).default(32),
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
  /** Start the three scripted demo agents with `npm start`. */
  HANDSHAKE_DEMO: z.stringbool().default(true),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  ANTHROPIC_MODEL: z.string().min(1).default("claude-sonnet-4-5"),
  CI: z.stringbool().default(false),
  // Tooling: the soak in `npm run test:reliability` and the knobs of `npm run bench` (bench/).
  SOAK_SECONDS: z.coerce.number().int().min(1).max(3_600).optional(),
  /** `1`: small counts and one round, for developing the bench; docs/PERFORMANCE.md is kept. */
  BENCH_QUICK: z.stringbool().default(false),
  /** Comma-separated subset of bench phases (push, loop, breakdown, throughput, scale, history). */
  BENCH_ONLY: z.string().min(1).optional(),
  BENCH_PORT: z.coerce.number().int().min(1024).max(65535).default(3330),
  /** `1`: rebuild .next-bench even though a build exists. */
  BENCH_REBUILD: z.stringbool().default(false),
  /** A folder: run the bench's server with `node --cpu-prof`, writing its profile there. */
  BENCH_CPU_PROF: z.string().min(1).optional(),
});

export type Env = z.infer<typeof envSchema>;

function parseEnv(source: NodeJS.ProcessEnv): Env {
  // Empty strings mean "unset" (a blank line in a .env file must not become a value).
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${issue.path.join(".")}: ${issue.message}`)
      .join("\n");
    throw new Error(`Invalid environment configuration:\n${problems}`);
  }
  return parsed.data;
}

export const env: Env = parseEnv(process.env);

export function requireDatabaseUrl(): string {
  if (!env.DATABASE_URL) {
    throw new Error(
      "DATABASE_URL is not set (npm start sets it; see README's configuration table)",
    );
  }
  return env.DATABASE_URL;
}

/**
 * The environment for a child process this project starts (the web server from `npm start`, test
 * servers): this process's own, plus overrides. Agent workers get a scrubbed one instead.
 */
export function childProcessEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...overrides };
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
] as const satisfies readonly (keyof Env)[];

/** The sandbox settings the user gave, to pass on to the supervisor and its workers (no secrets). */
export function sandboxSettingsEnv(): Record<string, string> {
  return Object.fromEntries(
    SANDBOX_VARIABLES.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
  );
}

/**
 * The environment for a process on the agents' side (the supervisor): built from nothing, so no
 * database URL or secret of ours can leak into it or into the workers it starts.
 */
export function agentSideProcessEnv(variables: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    NODE_ENV: "production",
    ...(process.env.HOME ? { HOME: process.env.HOME } : {}),
    ...variables,
  };
}
