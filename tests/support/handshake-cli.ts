import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { makeTempDir } from "./temp-dirs";
import { startEventBridge, type EventBridge } from "../../lib/realtime/event-bridge";
import { getEventHub } from "../../lib/realtime/event-hub";
import { LeadClient } from "../../lib/sdk/lead-client";
import { buildCli } from "../../scripts/build-cli";
import { createToken, type TestToken } from "../api/fixtures";
import { startApiServer } from "./api-server";

export const CLI_PATH = path.resolve(import.meta.dirname, "../../bin/handshake");

export type CliRun = { code: number | null; stdout: string; stderr: string };

/** bin/handshake as Claude Code runs it: a fresh process, its input on stdin. */
export function runCli(
  args: string[],
  options: { input?: string; env?: Record<string, string>; cwd?: string } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, ...args], {
      cwd: options.cwd ?? tmpdir(),
      env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", HOME: tmpdir(), ...options.env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

export async function ensureCliBundle(): Promise<void> {
  await buildCli({ ifStale: true });
}

export function newConfigDir(): Promise<string> {
  return makeTempDir("handshake-config-");
}

export type Handshake = {
  url: string;
  connect: TestToken;
  /** The Lead over the SDK, with an `admin` token. */
  lead: LeadClient;
  stop: () => Promise<void>;
};

/** The real /api/v1 handlers over HTTP, with the event bridge that wakes long-polls. */
export async function startHandshake(): Promise<Handshake> {
  const server = await startApiServer();
  const bridge: EventBridge = await startEventBridge({
    databaseUrl: requireDatabaseUrl(),
    db: getDb(),
    hub: getEventHub(),
  });
  const connect = await createToken("connect");
  const admin = await createToken("admin");
  return {
    url: server.url,
    connect,
    lead: new LeadClient(server.url, admin.token),
    stop: async () => {
      await server.close();
      await bridge.stop();
    },
  };
}

/** The pending request of a connected session, once its hook has raised it. */
export async function pendingRequestOf(
  sessionId: string,
  type: string,
  timeoutMs = 15_000,
): Promise<{ id: string; payload: unknown }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const request = await getDb().request.findFirst({
      where: {
        type,
        status: "pending",
        agent: { connector: { path: ["sessionId"], equals: sessionId } },
      },
    });
    if (request) return request;
    if (Date.now() > deadline) throw new Error(`no pending ${type} for session ${sessionId}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A port nothing listens on: the server is down. */
export const DOWN_URL = "http://127.0.0.1:9";

/** The agent of `--agent NAME`: its connect token's session `script-NAME`, once it exists. */
export async function scriptSessionAgent(name: string): Promise<{ id: string; name: string }> {
  for (;;) {
    const agent = await getDb().agent.findFirst({
      where: { connectorKey: { endsWith: `/script-${name}/` } },
      select: { id: true, name: true },
    });
    if (agent) return agent;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
