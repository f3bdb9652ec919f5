import { createHash } from "node:crypto";
import type { HumanActor, TokenActor } from "../auth/actor";
import { evictActorsAfterCommit } from "../auth/actor-cache";
import { getAuth } from "../auth/auth";
import { lockAgent, lockAgentRow } from "../agents/data";
import { startNewIncarnation } from "../agents/mutations";
import { connectorCwdOf, isAgentActive, type Connector } from "../shared/agents/schema";
import { isBelowWorkspaceRoot, workspaceRootOf } from "../shared/protocol/tool-risk";
import { setAgentState } from "../agents/state";
import { toAgentView, type AgentView } from "../agents/views";
import { isUniqueViolation, type Db } from "../db";
import { AppError } from "../errors";
import { appendEvent } from "../events/mutations";
import type { Agent, PrismaClient } from "../generated/prisma/client";
import { hashToken, newConnectorAgentToken } from "../tokens/credentials";
import { lockLiveApiToken } from "../tokens/data";
import { inTransaction } from "../transaction";
import { assertRoomForAgentOfToken } from "./capacity";
import type { ConnectSessionInput } from "./schema";
import { databaseNow } from "../database-clock";

export type ConnectedSession = { agent: AgentView; token: string; isCreated: boolean };

type Connected = ConnectedSession & { row: Agent };

/** One session (or teammate) of one connect token. Ids are `[A-Za-z0-9._-]`, so `/` cannot be forged. */
function connectorKeyOf(tokenId: string, sessionId: string, agentId?: string): string {
  return `${tokenId}/${sessionId}/${agentId ?? ""}`;
}

/** The last directory of the cwd, as an agent name can hold it: `~/src/API Server` → `api-server`. */
function slugOf(cwd: string): string {
  const base = cwd.split(/[\\/]/).filter(Boolean).at(-1) ?? "";
  const slug = base
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 20)
    .replace(/^-+|-+$/g, "");
  return slug || "session";
}

const NAME_SUFFIX_LENGTHS = [4, 6, 8];

/**
 * A short readable name: the directory's slug and a few hex digits of the session's key (for a
 * teammate, its session's name and `t` + digits), longer only if that name is already taken.
 * Stems are at most 29 characters, so a teammate's name stays within the 40 the rules allow.
 */
async function pickName(tx: Db, stem: string, key: string, marker: "" | "t"): Promise<string> {
  const digits = createHash("sha256").update(key).digest("hex");
  for (const length of NAME_SUFFIX_LENGTHS) {
    const name = `${stem}-${marker}${digits.slice(0, length)}`;
    if (!(await tx.agent.findUnique({ where: { name }, select: { id: true } }))) return name;
  }
  throw new AppError("AGENT_EXISTS", `no free name for a session in '${stem}'`);
}

/**
 * A teammate works in its parent's directory or below it, never wider: Claude Code puts a worktree
 * subagent at the root of the repository, which may hold the parent's directory, and judged from
 * there every read in the repository would run at once. Anywhere else it is judged from its
 * parent's directory, where its calls, made elsewhere, find nothing that runs at once.
 */
function cwdWithin(cwd: string, parentCwd: string | undefined): string {
  if (parentCwd === undefined) return cwd;
  const root = workspaceRootOf(parentCwd);
  return root !== null && isBelowWorkspaceRoot(cwd, root) ? cwd : parentCwd;
}

/**
 * Returns the live agent of the session, with the token derived for its incarnation, its directory
 * kept within its parent's (a teammate registered before that rule came back wider).
 */
async function answerExisting(
  tx: Db,
  caller: TokenActor,
  secret: string,
  found: Agent,
  parentCwd: string | undefined,
): Promise<Connected> {
  const key = found.connectorKey ?? "";
  let agent = await lockAgent(tx, found.id);
  const cwd = connectorCwdOf(agent.connector);
  const bounded = cwd === undefined ? cwd : cwdWithin(cwd, parentCwd);
  if (bounded !== cwd) {
    agent = await tx.agent.update({
      where: { id: agent.id },
      data: { connector: { ...(agent.connector as Connector), cwd: bounded } },
    });
  }
  if (!isAgentActive(agent.status)) {
    // The Lead's stop (or the connect token's revocation) sticks for the session, and so does a
    // SessionEnd while the Lead asked it to stop (endReportedByAgent marks that forced); a session
    // that ended by itself comes back (`claude --resume`) as a new incarnation with a new token.
    if (agent.isForcedStop) {
      throw new AppError(
        "AGENT_NOT_ACTIVE",
        `agent '${agent.name}' was stopped by the Lead; start a new session to connect again`,
      );
    }
    await assertRoomForAgentOfToken(tx, caller.tokenId);
    const token = newConnectorAgentToken(secret, key, agent.incarnation + 1);
    agent = await startNewIncarnation(
      tx,
      agent,
      { role: agent.role, prompt: agent.prompt, requirePlan: agent.requirePlan, worker: undefined },
      hashToken(token),
    );
    agent = await setAgentState(tx, agent, { status: "idle" });
    return { agent: toAgentView(agent), token, isCreated: false, row: agent };
  }
  const token = newConnectorAgentToken(secret, key, agent.incarnation);
  // The server's secret changed, or a Lead's respawn minted a random token: the session's own
  // token is the derived one again.
  if (hashToken(token) !== agent.tokenHash) {
    evictActorsAfterCommit(tx, [`agent:${agent.id}`]);
    agent = await tx.agent.update({
      where: { id: agent.id },
      data: { tokenHash: hashToken(token) },
    });
  }
  if (agent.status === "offline") {
    agent = await tx.agent.update({
      where: { id: agent.id },
      data: { lastHeartbeatAt: databaseNow() },
    });
    agent = await setAgentState(tx, agent, { status: "idle" });
  }
  return { agent: toAgentView(agent), token, isCreated: false, row: agent };
}

/** Concurrent calls for one session queue here, so exactly one of them creates its agent. */
async function lockConnectorKey(tx: Db, key: string): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))::text`;
}

/**
 * A teammate's connect answers two agents, its session's and its own. Their rows are locked in id
 * order, the order of every transaction that locks several agents: taken session first, a
 * broadcast holding the teammate's and waiting for the session's deadlocked with it (red team, by
 * reading). After both keys' queues, which every connect joins before it locks its agent.
 */
async function lockSessionAndTeammate(tx: Db, keys: readonly string[]): Promise<void> {
  for (const key of keys) await lockConnectorKey(tx, key);
  const existing = await tx.agent.findMany({
    where: { connectorKey: { in: [...keys] } },
    select: { id: true },
    orderBy: { id: "asc" },
  });
  for (const { id } of existing) await lockAgentRow(tx, id);
}

async function connectOne(
  tx: Db,
  caller: TokenActor,
  secret: string,
  input: ConnectSessionInput,
  parent: { row: Agent } | { name: string | null; connector: unknown },
): Promise<Connected> {
  const key = connectorKeyOf(caller.tokenId, input.sessionId, input.agentId);
  await lockConnectorKey(tx, key);
  const parentCwd = connectorCwdOf("row" in parent ? parent.row.connector : parent.connector);
  const existing = await tx.agent.findUnique({ where: { connectorKey: key } });
  if (existing && existing.ownerTokenId !== caller.tokenId) {
    throw new AppError(
      "NOT_AGENT_OWNER",
      `agent '${existing.name}' was registered again by someone else; start a new session to connect`,
    );
  }
  if (existing) return answerExisting(tx, caller, secret, existing, parentCwd);
  await assertRoomForAgentOfToken(tx, caller.tokenId);

  const parentRow = "row" in parent ? parent.row : null;
  const name = parentRow
    ? await pickName(tx, parentRow.name, key, "t")
    : await pickName(tx, slugOf(input.cwd), key, "");
  const connector: Connector = {
    sessionId: input.sessionId,
    agentId: input.agentId ?? null,
    agentType: input.agentType ?? null,
    cwd: cwdWithin(input.cwd, parentCwd),
    model: input.model ?? null,
    parent: parentRow ? parentRow.name : "name" in parent ? parent.name : null,
    parentSessionId: input.parentSessionId ?? null,
  };
  const token = newConnectorAgentToken(secret, key, 1);
  const agent = await tx.agent.create({
    data: {
      name,
      role: input.agentType ?? (parentRow ? "Claude Code teammate" : "Claude Code session"),
      status: "idle",
      gate: "not_required",
      requirePlan: false,
      tokenHash: hashToken(token),
      ownerTokenId: caller.tokenId,
      toolHost: "external",
      connectorKey: key,
      connector,
      lastHeartbeatAt: databaseNow(),
    },
  });
  await appendEvent(tx, "agent.registered", `agent:${agent.name}`, {
    agent: agent.name,
    incarnation: agent.incarnation,
    role: agent.role,
  });
  return { agent: toAgentView(agent), token, isCreated: true, row: agent };
}

/** Two different sessions may race for one free name; the loser tries the next suffix. */
const NAME_RACE_ATTEMPTS = 3;

/**
 * Registers a Claude Code session (or one of its teammates) as an agent of the calling `connect`
 * token, or returns the one it already has: the same agent and the same token for the same
 * session, also when calls race. A teammate's session gets its agent too, as the teammate's parent.
 */
export async function connectSession(
  db: PrismaClient,
  actor: HumanActor,
  input: ConnectSessionInput,
): Promise<ConnectedSession> {
  // The session's agents belong to the token: revoking it ends them (lib/tokens/mutations.ts).
  if (actor.via !== "token" || actor.scope !== "connect") {
    throw new AppError("FORBIDDEN", "sessions connect with a 'connect' API token");
  }
  const caller: TokenActor = actor;
  const { secret } = await getAuth().$context;
  for (let attempt = 1; ; attempt++) {
    try {
      const { row: _row, ...answer } = await inTransaction(db, async (tx) => {
        await lockLiveApiToken(tx, caller.tokenId);
        if (input.agentId) {
          const { agentId: _agentId, agentType: _agentType, ...session } = input;
          await lockSessionAndTeammate(tx, [
            connectorKeyOf(caller.tokenId, input.sessionId),
            connectorKeyOf(caller.tokenId, input.sessionId, input.agentId),
          ]);
          const sessionAgent = await connectOne(tx, caller, secret, session, {
            name: null,
            connector: null,
          });
          return connectOne(tx, caller, secret, input, { row: sessionAgent.row });
        }
        const parentSession = input.parentSessionId
          ? await tx.agent.findUnique({
              where: { connectorKey: connectorKeyOf(caller.tokenId, input.parentSessionId) },
              select: { name: true, connector: true },
            })
          : null;
        return connectOne(tx, caller, secret, input, {
          name: parentSession?.name ?? null,
          connector: parentSession?.connector ?? null,
        });
      });
      return answer;
    } catch (error) {
      if (attempt < NAME_RACE_ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}
