import {
  Prisma,
  type PrismaClient,
  type Agent,
  type RequestStatus,
} from "../generated/prisma/client";
import type { HumanActor } from "../auth/actor";
import { evictActorsAfterCommit } from "../auth/actor-cache";
import { isUniqueViolation, type Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import { deliverMessage, settleUnreadMessages } from "../messages/deliver";
import { env } from "../env";
import { hashToken, newAgentToken } from "../tokens/credentials";
import { lockLiveCaller } from "../tokens/data";
import { assertRoomForAgentOfToken } from "../connect/capacity";
import { cancelPendingRequests } from "../requests/mutations";
import { directionOf } from "../requests/views";
import { isApprovingPolicy } from "../protocol/definition";
import { decidedBySchema } from "../shared/api/request";
import { releaseTasksHeldBy } from "../tasks/holder";
import { findAgentByName, lockActingAgent, lockAgent } from "./data";
import { takeAgentRate } from "./limits";
import { toAgentView, type AgentView } from "./views";
import type { HeartbeatInput, RegisterAgentInput, WorkerExitInput } from "./schema";
import {
  describeStatus,
  isAgentActive,
  WAITING_STATUSES,
  type GateState,
  type ToolHost,
  type WorkerConfig,
} from "../shared/agents/schema";
import { endIncarnation, setAgentState } from "./state";
import { inTransaction } from "../transaction";
import { databaseNow } from "../database-clock";

/** The gate an agent's (new) work starts with. */
export function initialGate(requirePlan: boolean): GateState {
  return requirePlan ? "required" : "not_required";
}

export type RegisteredAgent = { agent: AgentView; token: string };

/** The `connect` token a caller acts with, if any: such a caller may touch only agents it registered. */
function connectTokenOf(caller: HumanActor | undefined): string | null {
  return caller?.via === "token" && caller.scope === "connect" ? caller.tokenId : null;
}

/** The supervisor's token acts only on agents the supervisor runs (those with a worker config). */
function assertSupervisorRuns(agent: Agent, caller: HumanActor | undefined): void {
  if (caller?.via === "token" && caller.scope === "supervisor" && agent.worker === null) {
    throw new AppError(
      "AGENT_HAS_NO_WORKER",
      `agent '${agent.name}' is not run by the supervisor: whoever registered it holds its token`,
    );
  }
}

/**
 * Whether `caller` may start `agent` again. A `connect` token, which anything running as its user
 * can read, starts only its own agents and undoes nothing the Lead set (red team, round eleven):
 * a session's agent comes back by connecting, which keeps the Lead's stop and plan requirement
 * (lib/connect/mutations.ts), and an agent the Lead stopped by force, or is asking to stop, waits
 * for a Lead. A start that makes one more of the token's agents active counts under its cap.
 */
async function assertMayRespawn(
  tx: Db,
  agent: Agent,
  caller: HumanActor | undefined,
): Promise<void> {
  assertSupervisorRuns(agent, caller);
  const connectTokenId = connectTokenOf(caller);
  if (!connectTokenId) return;
  if (agent.ownerTokenId !== connectTokenId) {
    throw new AppError("NOT_AGENT_OWNER", `agent '${agent.name}' was not registered by this token`);
  }
  if (agent.connectorKey !== null) {
    throw new AppError(
      "FORBIDDEN",
      `agent '${agent.name}' is a connected session's: it comes back when its session connects again`,
    );
  }
  if (agent.isForcedStop) {
    throw new AppError(
      "AGENT_NOT_ACTIVE",
      `agent '${agent.name}' was stopped by the Lead; only a Lead can start it again`,
    );
  }
  if (isAgentActive(agent.status) && (await isLeadAskingToStop(tx, agent))) {
    throw new AppError(
      "AGENT_STOPPING",
      `the Lead asked agent '${agent.name}' to stop; only a Lead can start it again until it has`,
    );
  }
  await assertRoomForAgentOfToken(tx, connectTokenId, agent);
}

/**
 * A shutdown of the Lead's pending or agreed for the agent's incarnation: while the agent has not
 * ended, one it has not yet carried out. An agent that ended as agreed keeps it `approved`.
 */
async function isLeadAskingToStop(tx: Db, agent: Agent): Promise<boolean> {
  const shutdowns = await shutdownsOfIncarnation(tx, agent, ["pending", "approved"]);
  return shutdowns.some((request) => directionOf(request) === "lead_to_agent");
}

/** The shutdown requests, either way, of the agent's current incarnation in `statuses`. */
function shutdownsOfIncarnation(tx: Db, agent: Agent, statuses: RequestStatus[]) {
  return tx.request.findMany({
    where: {
      agentId: agent.id,
      incarnation: agent.incarnation,
      type: "shutdown",
      status: { in: statuses },
    },
    select: { target: true, status: true, decidedBy: true },
  });
}

export type AgentConfig = Pick<Agent, "role" | "prompt" | "requirePlan"> & {
  /** Undefined keeps the stored worker configuration. */
  worker: WorkerConfig | undefined;
  /**
   * Undefined keeps the stored owner (a respawn); a registration names the registering token, or
   * none, so a `connect` token never keeps a name someone else took over.
   */
  ownerTokenId?: string | null;
};

/**
 * Starts a new incarnation of an ended (or offline) agent: the old incarnation's pending requests
 * are cancelled and its token stops working, so nothing fenced to the old `alice` can act on the
 * new one. The caller holds the agent's row lock.
 */
export async function startNewIncarnation(
  tx: Db,
  locked: Agent,
  config: AgentConfig,
  tokenHash: string,
): Promise<Agent> {
  if (isAgentActive(locked.status) && locked.status !== "offline") {
    throw new AppError(
      "AGENT_EXISTS",
      `agent '${locked.name}' is still running (${describeStatus(locked.status)}); stop it before starting it again`,
    );
  }
  const reason = `incarnation ${locked.incarnation} was replaced`;
  // A name registered by another owner is no longer the session's: its session, connecting again,
  // gets an agent of its own instead of this one's token.
  const isTakenOver =
    config.ownerTokenId !== undefined && config.ownerTokenId !== locked.ownerTokenId;
  await cancelPendingRequests(tx, locked.id, reason);
  await settleUnreadMessages(tx, locked, locked.incarnation + 1);
  await releaseTasksHeldBy(tx, locked);
  evictActorsAfterCommit(tx, [`agent:${locked.id}`]);
  const agent = await tx.agent.update({
    where: { id: locked.id },
    data: {
      role: config.role,
      prompt: config.prompt,
      status: "starting",
      gate: initialGate(config.requirePlan),
      requirePlan: config.requirePlan,
      incarnation: locked.incarnation + 1,
      workVersion: locked.workVersion + 1,
      taskId: null,
      tokenHash,
      worker: config.worker,
      ownerTokenId: config.ownerTokenId,
      ...(isTakenOver ? { connectorKey: null, connector: Prisma.DbNull, toolHost: null } : {}),
      isForcedStop: false,
      lastHeartbeatAt: null,
      updatedAt: databaseNow(),
    },
  });
  await appendEvent(tx, "agent.respawned", `agent:${agent.name}`, {
    agent: agent.name,
    incarnation: agent.incarnation,
    previousIncarnation: locked.incarnation,
  });
  return agent;
}

/**
 * Registers a new agent, or respawns an ended one under the same name with the configuration
 * given. A `connect` token's agents are recorded as its own; it may respawn only those, and never
 * asks for a server-side worker (its agents run on the user's machine).
 */
export async function registerAgent(
  db: PrismaClient,
  input: RegisterAgentInput,
  caller?: HumanActor,
): Promise<RegisteredAgent> {
  if (connectTokenOf(caller) && input.worker) {
    throw new AppError(
      "FORBIDDEN",
      "a 'connect' token registers agents that run elsewhere; only a Lead spawns server workers",
    );
  }
  const token = newAgentToken();
  const tokenHash = hashToken(token);
  const config: AgentConfig = {
    role: input.role,
    prompt: input.prompt ?? null,
    requirePlan: input.requirePlan ?? false,
    worker: input.worker,
    ownerTokenId: caller?.via === "token" ? caller.tokenId : null,
  };
  const connectTokenId = connectTokenOf(caller);
  const registered = inTransaction(db, async (tx) => {
    if (caller) await lockLiveCaller(tx, caller);
    const existing = await tx.agent.findUnique({ where: { name: input.name } });
    let agent: Agent;
    if (existing) {
      const locked = await lockAgent(tx, existing.id);
      await assertMayRespawn(tx, locked, caller);
      // The Lead's plan requirement is not the token's to lift by registering the name again.
      const requirePlan = config.requirePlan || (connectTokenId !== null && locked.requirePlan);
      agent = await startNewIncarnation(tx, locked, { ...config, requirePlan }, tokenHash);
    } else {
      if (connectTokenId) await assertRoomForAgentOfToken(tx, connectTokenId);
      agent = await tx.agent.create({
        data: {
          name: input.name,
          role: config.role,
          prompt: config.prompt,
          gate: initialGate(config.requirePlan),
          requirePlan: config.requirePlan,
          tokenHash,
          worker: config.worker,
          ownerTokenId: config.ownerTokenId ?? null,
        },
      });
      await appendEvent(tx, "agent.registered", `agent:${agent.name}`, {
        agent: agent.name,
        incarnation: agent.incarnation,
        role: agent.role,
      });
    }
    if (input.taskId) agent = await assignTask(tx, agent, input.taskId);
    return { agent: toAgentView(agent), token };
  });
  // Two registrations of one new name at once: the second finds it taken only at its insert.
  return registered.catch((error: unknown) => {
    if (!isUniqueViolation(error)) throw error;
    throw new AppError(
      "AGENT_EXISTS",
      `agent '${input.name}' was registered by another call at the same time`,
    );
  });
}

/**
 * Respawns an existing agent with the configuration it has stored (role, prompt, plan
 * requirement, worker): what the supervisor does after a restart, without the power to register
 * a new agent or change one.
 */
export async function respawnAgent(
  db: PrismaClient,
  name: string,
  caller: HumanActor,
): Promise<RegisteredAgent> {
  const token = newAgentToken();
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, caller);
    const locked = await lockAgent(tx, (await findAgentByName(tx, name)).id);
    await assertMayRespawn(tx, locked, caller);
    const agent = await startNewIncarnation(
      tx,
      locked,
      {
        role: locked.role,
        prompt: locked.prompt,
        requirePlan: locked.requirePlan,
        worker: undefined,
      },
      hashToken(token),
    );
    return { agent: toAgentView(agent), token };
  });
}

async function assignTask(db: Db, agent: Agent, taskId: string): Promise<Agent> {
  const { count } = await db.task.updateMany({
    where: { id: taskId, status: "open" },
    data: { status: "claimed", assigneeId: agent.id, updatedAt: databaseNow() },
  });
  if (count !== 1)
    throw new AppError("TASK_NOT_AVAILABLE", `task ${taskId} does not exist or is not open`);
  await appendEvent(db, "task.updated", `task:${taskId}`, {
    taskId,
    status: "claimed",
    agent: agent.name,
  });
  return setAgentState(db, agent, { taskId });
}

function assertActive(agent: Agent): void {
  if (!isAgentActive(agent.status)) {
    throw new AppError("AGENT_NOT_ACTIVE", `agent '${agent.name}' is ${agent.status}`);
  }
}

/**
 * The Lead requires a plan: the gate closes now, before the agent has even read the message. A plan
 * already under review stays under review.
 */
export async function requirePlan(
  db: PrismaClient,
  name: string,
  reason: string | undefined,
): Promise<AgentView> {
  return inTransaction(db, async (tx) => {
    const agent = await lockAgent(tx, (await findAgentByName(tx, name)).id);
    assertActive(agent);
    await tx.agent.update({ where: { id: agent.id }, data: { requirePlan: true } });
    const gate: GateState = agent.gate === "pending" ? "pending" : "required";
    const updated = await setAgentState(tx, { ...agent, requirePlan: true }, { gate });
    await deliverMessage(tx, {
      from: "lead",
      to: agent.name,
      agentId: agent.id,
      incarnation: agent.incarnation,
      type: "plan_request",
      content:
        reason ??
        "The Lead requires a plan: submit one and wait for approval before changing anything.",
      metadata: { incarnation: agent.incarnation },
    });
    return toAgentView(updated);
  });
}

export async function recordHeartbeat(
  db: PrismaClient,
  agentId: string,
  incarnation: number,
  input: HeartbeatInput,
): Promise<AgentView> {
  const recorded = await inTransaction(db, async (tx): Promise<AgentView | AppError> => {
    const agent = await lockActingAgent(tx, agentId, incarnation);
    if (input.toolHost !== undefined) assertMayClaimToolHost(agent, input.toolHost);
    if (input.status === "ended") return toAgentView(await endReportedByAgent(tx, agent));
    if (agent.status === "stopping" && input.status !== "stopping") {
      throw new AppError(
        "AGENT_STOPPING",
        "this agent agreed to stop; stopping is one-way (persist your state and exit)",
      );
    }
    if (input.taskId !== undefined && input.taskId !== agent.taskId) {
      throw new AppError(
        "TASK_NOT_AVAILABLE",
        "the reported task is not the agent's current task: claim or release it through /api/v1/tasks",
      );
    }
    const now = databaseNow();
    const isToolHostChanged = input.toolHost !== undefined && input.toolHost !== agent.toolHost;
    // A heartbeat sent before the worker learnt of its own pending request can arrive after it:
    // while a request of this incarnation waits on the Lead, the agent is waiting, whatever it says.
    const isStillWaiting =
      WAITING_STATUSES.includes(agent.status) &&
      input.status !== agent.status &&
      (await tx.request.count({
        where: {
          agentId: agent.id,
          incarnation: agent.incarnation,
          status: "pending",
          target: "lead",
        },
      })) > 0;
    const alive = await tx.agent.update({
      where: { id: agent.id },
      data: { lastHeartbeatAt: now },
    });
    if ((agent.status === input.status || isStillWaiting) && !isToolHostChanged) {
      return toAgentView(alive);
    }
    // Counted here, where the heartbeat is known to write an event. Refused for the rate, it is
    // still the agent's sign of life: that commits, and the refusal is answered after.
    const refusal = refusalOfStateChange(agent.id);
    if (refusal) return refusal;
    return toAgentView(
      await setAgentState(tx, alive, {
        ...(isStillWaiting ? {} : { status: input.status }),
        ...(isToolHostChanged ? { toolHost: input.toolHost } : {}),
      }),
    );
  });
  if (recorded instanceof AppError) throw recorded;
  return recorded;
}

function refusalOfStateChange(agentId: string): AppError | null {
  try {
    takeAgentRate(agentId, "state_changes");
    return null;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

/**
 * The board shows where an agent's tools run as the agent reports it, so the claim must be one
 * the agent can make: a connected session's tools run unconfined on the user's machine, and only
 * the supervisor's workers run in its bubblewrap sandbox.
 */
function assertMayClaimToolHost(agent: Agent, toolHost: ToolHost): void {
  if (agent.connectorKey !== null && toolHost !== "external") {
    throw new AppError(
      "TOOL_HOST_NOT_ALLOWED",
      "a connected session's tools run on the user's machine, unconfined: its toolHost is 'external'",
    );
  }
  if (agent.worker === null && toolHost === "sandboxed") {
    throw new AppError(
      "TOOL_HOST_NOT_ALLOWED",
      `agent '${agent.name}' is not run by the supervisor, so its tools run in no sandbox of ours`,
    );
  }
}

/**
 * The agent says it has ended. A connected session ended (Claude Code's SessionEnd): the
 * incarnation ends, its pending requests are cancelled, and its token stops working. The session
 * chose to end, and may come back on its next connect, unless the Lead had asked it to stop (a
 * shutdown of the Lead's pending or approved): then the stop is the Lead's, marked forced, which
 * its next connect cannot undo (answerExisting in lib/connect/mutations.ts). Only for a session:
 * any other agent comes back only when a Lead (or its owner) respawns it, and for a worker a
 * forced stop means SIGKILL.
 *
 * Any other agent says so only once its incarnation's shutdown was approved (by the Lead, by the
 * agent answering the Lead's, or by its own request's approving timeout): it has exited as agreed,
 * which is no forced stop (without this, an agent the supervisor does not run ended forced at its
 * grace period's end, however promptly it left). Before that, and when it entered `stopping` on
 * its own, it asks the Lead with a shutdown request, so the Lead always knows why it left.
 */
async function endReportedByAgent(tx: Db, agent: Agent): Promise<Agent> {
  const shutdowns = await shutdownsOfIncarnation(tx, agent, ["pending", "approved", "expired"]);
  if (agent.connectorKey !== null) {
    const isLeadsStop = shutdowns.some(
      (request) => directionOf(request) === "lead_to_agent" && request.status !== "expired",
    );
    const reason = isLeadsStop
      ? "the session ended after the Lead asked it to stop: stopped by the Lead"
      : "the session ended";
    await cancelPendingRequests(tx, agent.id, reason);
    return endIncarnation(tx, agent, { isForced: isLeadsStop, reason });
  }
  const isApprovedStop =
    agent.status === "stopping" &&
    shutdowns.some(
      (request) => request.status === "approved" || isApprovingTimeout(request.decidedBy),
    );
  if (!isApprovedStop) {
    throw new AppError(
      "FORBIDDEN",
      "an agent reports 'ended' once its shutdown is approved; before that it asks the Lead with a shutdown request",
    );
  }
  const reason = "stopped after an approved shutdown";
  await cancelPendingRequests(tx, agent.id, reason);
  return endIncarnation(tx, agent, { isForced: false, status: "shutdown", reason });
}

/** An expired request whose timeout policy said yes (an agent's own shutdown: it stops). */
function isApprovingTimeout(decidedBy: Prisma.JsonValue): boolean {
  const parsed = decidedBySchema.safeParse(decidedBy);
  return parsed.success && parsed.data.kind === "timeout" && isApprovingPolicy(parsed.data.policy);
}

/**
 * Ends the incarnation at once. A session's incarnation that already ended (its own SessionEnd)
 * keeps its status and becomes the Lead's stop, so the session cannot resume it; any other agent
 * that ended, and a force-stopped one, is returned unchanged.
 */
export async function forceStop(
  db: PrismaClient,
  name: string,
  reason = "force-stopped by the Lead",
): Promise<AgentView> {
  return inTransaction(db, async (tx) => {
    const agent = await lockAgent(tx, (await findAgentByName(tx, name)).id);
    if (!isAgentActive(agent.status)) {
      // Only a session comes back by itself (its next connect); any other agent ended stays so.
      if (agent.isForcedStop || agent.connectorKey === null) return toAgentView(agent);
      return toAgentView(await markEndedAsForced(tx, agent, `${reason} after it had ended`));
    }
    await cancelPendingRequests(tx, agent.id, reason);
    return toAgentView(await endIncarnation(tx, agent, { isForced: true, reason }));
  });
}

/** The Lead's stop of an incarnation that already ended: its status stays, the stop is forced. */
async function markEndedAsForced(tx: Db, agent: Agent, reason: string): Promise<Agent> {
  const updated = await tx.agent.update({
    where: { id: agent.id },
    data: { isForcedStop: true, updatedAt: databaseNow() },
  });
  await appendEvent(tx, "agent.stopped", `agent:${agent.name}`, {
    agent: agent.name,
    incarnation: updated.incarnation,
    status: updated.status,
    isForced: true,
    reason,
  });
  return updated;
}

/**
 * Ends every active agent a token registered (its revocation). The caller holds the token's row
 * lock, taken before any agent's, as a connecting session takes them.
 */
export async function endAgentsOwnedBy(tx: Db, tokenId: string, reason: string): Promise<void> {
  const owned = await tx.agent.findMany({
    where: { ownerTokenId: tokenId },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  for (const { id } of owned) {
    const agent = await lockAgent(tx, id);
    if (!isAgentActive(agent.status)) continue;
    await cancelPendingRequests(tx, agent.id, reason);
    await endIncarnation(tx, agent, { isForced: true, reason });
  }
}

export const HEARTBEAT_TIMEOUT_MS = 30_000;

/**
 * How long an agent may stay silent before it is marked offline. A connected session sends no
 * heartbeats between tool calls (a person may be reading, or away for lunch): only a long silence
 * (HANDSHAKE_CONNECTOR_SILENCE_SECONDS) or its SessionEnd takes it off the board's live list.
 */
function connectorSilenceMs(): number {
  return env.HANDSHAKE_CONNECTOR_SILENCE_SECONDS * 1000;
}

function silenceLimitMs(agent: Pick<Agent, "connectorKey">): number {
  return agent.connectorKey === null ? HEARTBEAT_TIMEOUT_MS : connectorSilenceMs();
}

/** Agents whose heartbeats stopped become `offline`; their pending requests show as orphaned. */
export async function markSilentAgentsOffline(
  db: PrismaClient,
  now = databaseNow(),
): Promise<string[]> {
  const workerCutoff = new Date(now.getTime() - HEARTBEAT_TIMEOUT_MS);
  const connectorCutoff = new Date(now.getTime() - connectorSilenceMs());
  const silentSince = (cutoff: Date) => [
    { lastHeartbeatAt: { lt: cutoff } },
    { lastHeartbeatAt: null, updatedAt: { lt: cutoff } },
  ];
  const silent = await db.agent.findMany({
    where: {
      // A stopping agent is not marked offline (which it could heartbeat its way back from):
      // its grace period ends it instead (forceOverdueStops).
      status: { in: ["starting", "working", "idle", ...WAITING_STATUSES] },
      OR: [
        { connectorKey: null, OR: silentSince(workerCutoff) },
        { connectorKey: { not: null }, OR: silentSince(connectorCutoff) },
      ],
    },
    select: { id: true },
  });
  const marked: string[] = [];
  for (const { id } of silent) {
    await inTransaction(db, async (tx) => {
      const agent = await lockAgent(tx, id);
      const lastSign = agent.lastHeartbeatAt ?? agent.updatedAt;
      const cutoff = now.getTime() - silenceLimitMs(agent);
      if (
        !isAgentActive(agent.status) ||
        agent.status === "offline" ||
        lastSign.getTime() >= cutoff
      ) {
        return;
      }
      await setAgentState(tx, agent, { status: "offline" });
      marked.push(agent.name);
    });
  }
  return marked;
}

/**
 * An agent that agreed to stop but has not exited within its grace period is stopped by force,
 * as a timed-out shutdown is: the incarnation ends and the supervisor kills the process.
 */
export async function forceOverdueStops(db: PrismaClient, now = databaseNow()): Promise<string[]> {
  const overdue = await db.agent.findMany({
    where: { status: "stopping", stopDeadlineAt: { lte: now } },
    select: { id: true },
  });
  const forced: string[] = [];
  for (const { id } of overdue) {
    await inTransaction(db, async (tx) => {
      const agent = await lockAgent(tx, id);
      if (agent.status !== "stopping" || !agent.stopDeadlineAt || agent.stopDeadlineAt > now)
        return;
      const reason = "did not stop within its grace period: forced stop";
      await cancelPendingRequests(tx, agent.id, reason);
      await endIncarnation(tx, agent, { isForced: true, reason });
      forced.push(agent.name);
    });
  }
  return forced;
}

/**
 * Hands a fresh token for the current incarnation to whoever runs its worker (the supervisor),
 * invalidating any earlier one, so exactly one process can act as this agent.
 */
export async function issueWorkerToken(
  db: PrismaClient,
  name: string,
  caller: HumanActor,
): Promise<RegisteredAgent> {
  const token = newAgentToken();
  return inTransaction(db, async (tx) => {
    await lockLiveCaller(tx, caller);
    const agent = await lockAgent(tx, (await findAgentByName(tx, name)).id);
    assertActive(agent);
    // Only agents the supervisor runs: any other agent's token stays with whoever registered it,
    // so a supervisor token cannot take over an agent it does not run.
    if (agent.worker === null) {
      throw new AppError(
        "AGENT_HAS_NO_WORKER",
        `agent '${agent.name}' is not run by the supervisor: whoever registered it holds its token`,
      );
    }
    evictActorsAfterCommit(tx, [`agent:${agent.id}`]);
    const updated = await tx.agent.update({
      where: { id: agent.id },
      data: { tokenHash: hashToken(token) },
    });
    return { agent: toAgentView(updated), token };
  });
}

/**
 * The supervisor reports that a worker process ended. After an approved shutdown a clean exit is
 * `shutdown`; any other exit is `crashed`. Pending requests stay pending (shown as orphaned) until a
 * respawn cancels them, so the Lead can still see what the agent was waiting for.
 */
export async function recordWorkerExit(
  db: PrismaClient,
  name: string,
  input: WorkerExitInput,
  caller?: HumanActor,
): Promise<AgentView> {
  return inTransaction(db, async (tx) => {
    const agent = await lockAgent(tx, (await findAgentByName(tx, name)).id);
    assertSupervisorRuns(agent, caller);
    if (agent.incarnation !== input.incarnation) {
      throw new AppError(
        "STALE_INCARNATION",
        `incarnation ${input.incarnation} of '${name}' has already been replaced`,
      );
    }
    if (!isAgentActive(agent.status)) return toAgentView(agent);
    const isCleanStop = agent.status === "stopping" && input.exitCode === 0;
    const how = input.signal ? `killed by ${input.signal}` : `exited with code ${input.exitCode}`;
    return toAgentView(
      await endIncarnation(tx, agent, {
        isForced: false,
        status: isCleanStop ? "shutdown" : "crashed",
        reason:
          input.reason ?? (isCleanStop ? "stopped after an approved shutdown" : `worker ${how}`),
      }),
    );
  });
}
