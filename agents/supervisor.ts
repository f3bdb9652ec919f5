import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { AgentView } from "../lib/agents/views";
import { workerConfigSchema, type WorkerConfig } from "../lib/shared/agents/schema";
import { parseEventData } from "../lib/shared/events/catalog";
import type { EventWire } from "../lib/shared/api/event";
import { ApiError } from "../lib/sdk/errors";
import { LeadClient } from "../lib/sdk/lead-client";
import { secretsStdio, sendSecrets } from "./secrets-pipe";

export type SupervisorOptions = {
  serverUrl: string;
  /** A `supervisor`-scoped API token: the supervisor acts through the public API like any client. */
  supervisorToken: string;
  dataDir: string;
  /** Extra variables for workers (model and sandbox settings); never a secret. */
  workerEnv?: Record<string, string>;
  /** The model API key: handed to each worker over its secrets pipe with its token. */
  anthropicApiKey?: string;
  pollIntervalMs?: number;
  heartbeatMs?: number;
  /** Grace period between SIGTERM and SIGKILL when stopping a worker. */
  killGraceMs?: number;
};

type RunningWorker = { name: string; incarnation: number; child: ChildProcess };

const WORKER_ENTRY = path.resolve(import.meta.dirname, "worker.ts");

/**
 * Starts one OS process per agent the Lead spawns with a `worker` config, and nothing silently:
 * a worker that exits is reported (shutdown after an approved stop, crashed otherwise) and stays
 * down until someone respawns it. A worker whose incarnation ends (forced stop, shutdown timeout)
 * is killed.
 */
export class Supervisor {
  private readonly client: LeadClient;
  private readonly workers = new Map<string, RunningWorker>();
  private cursor = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private isStopping = false;
  private isPolling = false;

  constructor(private readonly options: SupervisorOptions) {
    this.client = new LeadClient(options.serverUrl, options.supervisorToken);
  }

  /** Recovers agents that should be running (as new incarnations), then follows the event log. */
  async start(): Promise<void> {
    // Take the cursor first: a spawn that happens during recovery is then seen, not missed.
    this.cursor = await this.client.newestEventId();
    for (const agent of await this.client.listAgents()) {
      const worker = parseWorker(agent);
      if (!worker || !isRunning(agent)) continue;
      if (agent.status === "starting" && agent.lastHeartbeatAt === null) {
        // Registered but never run (e.g. spawned while no supervisor was up): just start it.
        const { agent: current, token } = await this.client.issueWorkerToken(agent.name);
        this.launch(current, worker, token);
      } else {
        await this.recover(agent, worker);
      }
    }
    this.pollTimer = setInterval(() => void this.poll(), this.options.pollIntervalMs ?? 300);
  }

  async stop(): Promise<void> {
    this.isStopping = true;
    clearInterval(this.pollTimer);
    await Promise.all([...this.workers.values()].map((worker) => this.kill(worker, "SIGTERM")));
  }

  runningWorkers(): { name: string; incarnation: number; pid: number | undefined }[] {
    return [...this.workers.values()].map(({ name, incarnation, child }) => ({
      name,
      incarnation,
      pid: child.pid,
    }));
  }

  private async recover(agent: AgentView, worker: WorkerConfig): Promise<void> {
    // Its previous process is gone with the previous supervisor: record that, then start afresh as
    // a new incarnation, which cancels whatever the old one left pending.
    await this.client
      .reportExit(agent.name, {
        incarnation: agent.incarnation,
        exitCode: null,
        signal: null,
        reason: "supervisor restarted; worker restarted as a new incarnation",
      })
      .catch(ignoreStale);
    const { agent: respawned, token } = await this.client.respawnAgent(agent.name);
    this.launch(respawned, parseWorker(respawned) ?? worker, token);
  }

  private async poll(): Promise<void> {
    if (this.isPolling || this.isStopping) return;
    this.isPolling = true;
    try {
      for (;;) {
        const events = await this.client.eventsAfter(this.cursor);
        for (const event of events) {
          await this.handle(event).catch((error: unknown) =>
            console.error(`[supervisor] ${event.kind} failed`, error),
          );
          this.cursor = event.id;
        }
        if (events.length < 500) break;
      }
    } catch (error) {
      console.error("[supervisor] could not read events; retrying", (error as Error).message);
    } finally {
      this.isPolling = false;
    }
  }

  private async handle(event: EventWire): Promise<void> {
    const kind = event.kind;
    if (kind !== "agent.registered" && kind !== "agent.respawned" && kind !== "agent.stopped")
      return;
    const change = parseEventData(kind, event.data);
    if (!change) return;
    const { agent: name, incarnation } = change;
    const running = this.workers.get(name);
    switch (kind) {
      case "agent.registered":
      case "agent.respawned": {
        if (running && running.incarnation >= incarnation) return;
        if (running) await this.kill(running, "SIGKILL");
        const agent = await this.client.getAgent(name);
        const worker = parseWorker(agent);
        if (!worker || agent.incarnation !== incarnation || !isRunning(agent)) return;
        const { agent: current, token } = await this.client.issueWorkerToken(name);
        this.launch(current, worker, token);
        return;
      }
      case "agent.stopped": {
        if (running && running.incarnation === incarnation) {
          // A forced stop is immediate; otherwise the worker is already on its way out.
          await this.kill(running, "isForced" in change && change.isForced ? "SIGKILL" : "SIGTERM");
        }
        return;
      }
      default:
        return;
    }
  }

  private launch(agent: AgentView, worker: WorkerConfig, token: string): void {
    const workspace = path.resolve(this.options.dataDir, "workspaces", agent.name);
    const stateDir = path.resolve(this.options.dataDir, "agent-state");
    mkdirSync(workspace, { recursive: true });
    mkdirSync(stateDir, { recursive: true });
    // Built from nothing rather than copied: the worker gets the server URL, its workspace and
    // model settings, and not one variable of ours (no DATABASE_URL, no secrets). Its token and
    // the model API key go over a pipe, so they are in no environment or argv anyone can read.
    const env: NodeJS.ProcessEnv = {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      NODE_ENV: "production",
      HANDSHAKE_URL: this.options.serverUrl,
      HANDSHAKE_WORKSPACE: workspace,
      HANDSHAKE_STATE_FILE: path.join(stateDir, `${agent.name}.json`),
      HANDSHAKE_MODEL: worker.model,
      HANDSHAKE_HEARTBEAT_MS: String(this.options.heartbeatMs ?? 5_000),
      ...(worker.script ? { HANDSHAKE_SCRIPT: worker.script } : {}),
      ...this.options.workerEnv,
    };
    const child = spawn(process.execPath, ["--import", "tsx", WORKER_ENTRY], {
      env,
      cwd: path.resolve(import.meta.dirname, ".."),
      stdio: secretsStdio("inherit"),
    });
    sendSecrets(child, {
      agentToken: token,
      ...(this.options.anthropicApiKey ? { anthropicApiKey: this.options.anthropicApiKey } : {}),
    });
    const running: RunningWorker = { name: agent.name, incarnation: agent.incarnation, child };
    this.workers.set(agent.name, running);
    console.log(
      `[supervisor] started ${agent.name} (incarnation ${agent.incarnation}, pid ${child.pid})`,
    );
    child.once("exit", (code, signal) => void this.onExit(running, code, signal));
  }

  private async onExit(
    worker: RunningWorker,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): Promise<void> {
    if (this.workers.get(worker.name) === worker) this.workers.delete(worker.name);
    console.log(
      `[supervisor] ${worker.name} (incarnation ${worker.incarnation}) exited: ${signal ?? `code ${code}`}`,
    );
    if (this.isStopping) return;
    await this.client
      .reportExit(worker.name, { incarnation: worker.incarnation, exitCode: code, signal })
      .catch(ignoreStale)
      .catch((error: unknown) =>
        console.error(`[supervisor] could not report ${worker.name}'s exit`, error),
      );
  }

  private async kill(worker: RunningWorker, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => worker.child.once("exit", () => resolve()));
    worker.child.kill(signal);
    const grace = setTimeout(() => worker.child.kill("SIGKILL"), this.options.killGraceMs ?? 3_000);
    await exited;
    clearTimeout(grace);
  }
}

function parseWorker(agent: AgentView): WorkerConfig | null {
  const parsed = workerConfigSchema.safeParse(agent.worker);
  return parsed.success ? parsed.data : null;
}

function isRunning(agent: AgentView): boolean {
  return agent.status !== "shutdown" && agent.status !== "crashed";
}

function ignoreStale(error: unknown): void {
  if (
    error instanceof ApiError &&
    (error.code === "STALE_INCARNATION" || error.code === "AGENT_NOT_ACTIVE")
  )
    return;
  throw error;
}
