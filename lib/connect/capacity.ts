import { assertConnectTokenMayStart, countConnectTokenStart } from "../agents/limits";
import type { Db } from "../db";
import { env } from "../env";
import { AppError } from "../errors";
import { ENDED_STATUSES } from "../shared/agents/schema";
import { runAfterCommit } from "../transaction";
import { databaseNowMs } from "../database-clock";

/**
 * How recently an agent must have been heard from to hold a place under the cap. Nothing ends a
 * teammate whose subagent finished (it goes idle and stays so), nor a session whose SessionEnd
 * never came: counted while merely not ended, they filled the cap for good.
 */
const ACTIVE_WITHIN_MS = 10 * 60_000;

/**
 * Refuses a call that would make one more of a `connect` token's agents active past the cap,
 * whichever way it comes: a session or teammate connecting, or an agent registered or respawned
 * with the token. Each active agent has per-agent limits of its own, so a token with unlimited
 * agents would multiply them. `becoming` is the agent the call starts again, if it exists: it
 * is not counted, so starting again one that holds a place already takes none. The token's lock
 * makes two parallel calls at the cap's last place count one after the other; every caller takes
 * it after the agent's own row lock, if it holds one. Every start the cap lets through counts
 * against the token's starts per minute too, once it has committed.
 */
export async function assertRoomForAgentOfToken(
  tx: Db,
  tokenId: string,
  becoming?: { id: string },
): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`connect-token:${tokenId}`}, 0))::text`;
  const heardSince = new Date(databaseNowMs() - ACTIVE_WITHIN_MS);
  // Heard from: a heartbeat, or for one never heard from its last change, as the sweeper tells
  // silence; or a tool call or message of its own (a request it asks sends the Lead one), which
  // an agent the sweeper marked offline still sends without a heartbeat (red team, round
  // eleven). Each newest is one index probe per agent.
  const [{ active }] = await tx.$queryRaw<[{ active: number }]>`
    SELECT count(*)::int AS active FROM agents a
    WHERE a.owner_token_id = ${tokenId}::uuid
      AND a.status::text <> ALL (${[...ENDED_STATUSES]}::text[])
      AND (a.id <> ${becoming?.id ?? null}::uuid) IS NOT FALSE
      AND (
        coalesce(a.last_heartbeat_at, a.updated_at) >= ${heardSince}
        OR (SELECT t.created_at FROM tool_calls t WHERE t.agent_id = a.id
            ORDER BY t.id DESC LIMIT 1) >= ${heardSince}
        OR (SELECT m.created_at FROM messages m WHERE m.sender = a.name
            ORDER BY m.id DESC LIMIT 1) >= ${heardSince}
      )`;
  const cap = env.HANDSHAKE_CONNECT_MAX_ACTIVE_SESSIONS;
  if (active >= cap) {
    throw new AppError(
      "RATE_LIMITED",
      `this connect token already has ${active} agents heard from in the last 10 minutes ` +
        `(its sessions, their teammates and the agents it registered; at most ${cap}): end one ` +
        "(exit its Claude Code session, or stop it in the console), or wait for one to fall " +
        "silent, before starting another",
      // No clock frees a place, an ended agent does; every 429 carries a Retry-After all the same.
      { headers: { "retry-after": "60" } },
    );
  }
  assertConnectTokenMayStart(tokenId);
  runAfterCommit(tx, () => countConnectTokenStart(tokenId));
}
