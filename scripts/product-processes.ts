import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { secretsStdio, sendSecrets } from "../agents/secrets-pipe";
import { probeSandbox, readSandboxSettings } from "../agents/tools/sandbox";
import { createDb } from "../lib/db";
import { agentSideProcessEnv, env, sandboxSettingsEnv } from "../lib/env";
import { rotateApiToken } from "../lib/tokens/mutations";

/**
 * Refuses a start where something already listens on the server's address. `waitForHealth` asks
 * the address, not the process: another server there (a Handshake started earlier and still
 * running) would answer for the new one, which then fails to bind, and what was started on that
 * answer (a supervisor whose token rotation revoked the running one's, a bench's measurements)
 * would be the old server's.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(port, host, resolve);
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    throw new Error(
      `${host}:${port} is already in use: another server (an earlier Handshake?) listens there; stop it or choose another port`,
    );
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** Until the server on `serverUrl` answers its health check; fails if it exits first. */
export async function waitForHealth(serverUrl: string, serverExit: Promise<number>): Promise<void> {
  let hasExited = false;
  void serverExit.then(() => (hasExited = true));
  for (;;) {
    if (hasExited) throw new Error("the server exited during start-up (see its output above)");
    const isUp = await fetch(`${serverUrl}/api/v1/health`)
      .then((response) => response.ok)
      .catch(() => false);
    if (isUp) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The supervisor acts through the API with a `supervisor`-scoped token of the first Lead, renewed
 * (and the old one revoked) per start: it can run workers, never decide or mint credentials.
 */
export async function issueSupervisorToken(url: string): Promise<string> {
  const db = createDb(url);
  try {
    const firstLead = await db.user.findFirstOrThrow({
      where: { role: "lead" },
      orderBy: { createdAt: "asc" },
    });
    return (await rotateApiToken(db, firstLead.id, { name: "supervisor", scope: "supervisor" }))
      .token;
  } finally {
    await db.$disconnect();
  }
}

/**
 * The supervisor, on the agents' side of the line: the server URL in its environment, its
 * `supervisor`-scoped token and the model API key over a pipe (agents/secrets-pipe.ts), no database.
 */
export function spawnSupervisor(options: {
  serverUrl: string;
  supervisorToken: string;
  dataDir: string;
  /** Where workers with the Anthropic model send it, instead of the configured API (e2e stubs). */
  anthropic?: { baseUrl: string; apiKey: string };
}): ChildProcess {
  const anthropicBaseUrl = options.anthropic?.baseUrl ?? env.ANTHROPIC_BASE_URL;
  const anthropicApiKey = options.anthropic?.apiKey ?? env.ANTHROPIC_API_KEY;
  const child = spawn(process.execPath, ["--import", "tsx", "agents/run-supervisor.ts"], {
    stdio: secretsStdio("inherit"),
    env: agentSideProcessEnv({
      HANDSHAKE_URL: options.serverUrl,
      HANDSHAKE_DATA_DIR: options.dataDir,
      HANDSHAKE_HEARTBEAT_MS: String(env.HANDSHAKE_HEARTBEAT_MS),
      ANTHROPIC_MODEL: env.ANTHROPIC_MODEL,
      ...(anthropicBaseUrl ? { ANTHROPIC_BASE_URL: anthropicBaseUrl } : {}),
      ...sandboxSettingsEnv(),
    }),
  });
  sendSecrets(child, {
    supervisorToken: options.supervisorToken,
    ...(anthropicApiKey ? { anthropicApiKey } : {}),
  });
  return child;
}

/**
 * Runs the workers' sandbox probe once, on a folder where their workspaces live, so a machine
 * without bubblewrap (or user namespaces) is named at start-up instead of in each agent's card.
 * Returns the line to print, or null when bash will be sandboxed.
 */
export async function describeMissingSandbox(
  dataDir: string,
  settings = readSandboxSettings(env, process.getuid?.() === 0),
): Promise<string | null> {
  const probeDir = path.join(dataDir, "workspaces", ".sandbox-probe");
  await mkdir(probeDir, { recursive: true });
  try {
    const state = await probeSandbox(probeDir, settings);
    return state.status === "sandboxed"
      ? null
      : `[sandbox] agents' bash tool is DISABLED: ${state.reason}`;
  } finally {
    await rm(probeDir, { recursive: true, force: true });
  }
}
