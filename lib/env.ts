import { z } from "zod";
import { agentEnvSchema, parseEnv, pickSandboxSettings } from "./shared/env/agent-env";

// The server's only reader of process.env (agents/env.ts is the agents'). Every variable is listed
// here or in the agents' schema it extends, with its meaning; README's configuration names every
// one (lib/env.test.ts).
export const envSchema = agentEnvSchema.extend({
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
  HANDSHAKE_EMBEDDED_PG_PORT: z.coerce.number().int().min(1024).max(65535).default(54329),
  CHROMIUM_PATH: z.string().min(1).default("/usr/bin/chromium"),
  /** Where `next build` writes; a second checkout of the e2e suite can run beside the first. */
  HANDSHAKE_NEXT_DIST_DIR: z
    .string()
    .regex(/^\.next(-[a-z0-9-]+)?$/)
    .default(".next"),
  /** Port of the e2e suite's server. */
  E2E_PORT: z.coerce.number().int().min(1024).max(65535).default(3210),
  /**
   * An external agent's token (tests/support/idempotent-agent.ts). Supervised workers never get
   * theirs this way: the supervisor hands it over an inherited pipe (agents/secrets-pipe.ts).
   */
  HANDSHAKE_AGENT_TOKEN: z.string().min(16).optional(),
  /**
   * Per-agent limits (429 RATE_LIMITED with Retry-After), counted per web node. The defaults sit
   * well above what a worker or the soak does per agent; the bench, whose few agents call as fast
   * as the node answers, runs its server with higher ones (bench/server.ts).
   */
  HANDSHAKE_AGENT_MESSAGES_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  HANDSHAKE_AGENT_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  HANDSHAKE_AGENT_TOOL_CALLS_PER_MINUTE: z.coerce.number().int().min(1).default(6_000),
  /**
   * Task claims and releases, and heartbeats that change status or tool host: each is an event
   * sent to every console. A worker changes status a few times per turn and beats every 5 s; a
   * heartbeat that changes nothing is never counted.
   */
  HANDSHAKE_AGENT_STATE_CHANGES_PER_MINUTE: z.coerce.number().int().min(1).default(600),
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
  /**
   * Agents one `connect` token may have active at once (its sessions, their teammates and the
   * agents it registers), heard from in the last 10 minutes and not ended: each has per-agent
   * limits of its own. Past it a new one is refused until one ends or falls silent.
   */
  HANDSHAKE_CONNECT_MAX_ACTIVE_SESSIONS: z.coerce.number().int().min(1).default(64),
  /**
   * Agents one `connect` token may start per minute (sessions, teammates, registrations and
   * respawns that commit): ending one frees its place under the cap above, not its start.
   */
  HANDSHAKE_CONNECT_STARTS_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** Start the scripted demo team (scripts/demo-team.ts) with `npm start`. */
  HANDSHAKE_DEMO: z.stringbool().default(true),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
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
  /** The commit the bench also measures, in the same run, as "before"; `off` skips it. */
  BENCH_BASELINE: z
    .string()
    .regex(/^([0-9a-f]{7,40}|off)$/)
    .default("46ffd1d"),
  /** Set by the bench for its baseline run: serve from this folder, write results to that file. */
  BENCH_SERVER_DIR: z.string().min(1).optional(),
  BENCH_BASELINE_OUT: z.string().min(1).optional(),
  /** Where test fixtures too big for the repository are installed once (the Claude Code CLI). */
  HANDSHAKE_FIXTURES_DIR: z.string().min(1).optional(),
});

export type Env = z.infer<typeof envSchema>;

export const env: Env = parseEnv(envSchema, process.env);

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

/** The sandbox settings the user gave, to pass on to the supervisor and its workers (no secrets). */
export function sandboxSettingsEnv(): Record<string, string> {
  return pickSandboxSettings(process.env);
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
