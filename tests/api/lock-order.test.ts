import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it, vi } from "vitest";
import { token as tokenRoute } from "../../lib/api/v1/tokens";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import { holdLock } from "../support/held-lock";
import { api, createToken, lead, registerAgent, uniqueName } from "./fixtures";

// A broadcast writes to, and locks, every active agent: on a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_lock_order");
});

const db = getDb();
afterAll(() => db.$disconnect());

/**
 * Two agents of one connect token whose order by name is not their order by id: a transaction
 * locking them by name and one locking them by id each hold one the other waits for.
 */
async function agentsInCrossedOrder() {
  const headers = (await lead()).headers;
  for (;;) {
    const connect = await createToken("connect");
    const names = [uniqueName("aaa"), uniqueName("zzz")];
    for (const name of names) {
      const registered = await api.registerAgent(connect.headers, { name, role: "laptop" });
      expect(registered.status, JSON.stringify(registered.json)).toBe(201);
    }
    const [first, last] = await Promise.all(
      names.map((name) => db.agent.findUniqueOrThrow({ where: { name } })),
    );
    if (first && last && last.id < first.id) return { connect, byId: [last, first] };
    await api.revokeToken(headers, connect.id);
  }
}

/** Red team, round nine: a broadcast locked agents by name, everything else by id. */
describe("transactions that lock several agents", () => {
  it("a broadcast and a token's revocation both land, whichever waits for the other", async () => {
    // A deadlock made one of them a 500: a revocation that failed left the token live.
    const headers = (await lead()).headers;
    const { connect, byId } = await agentsInCrossedOrder();
    // The revocation takes the first by id and waits; the broadcast, by name, took the other.
    const held = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [byId[0]?.id]);
    const revoking = api.revokeToken(headers, connect.id);
    await held.untilWaiting(1);
    const broadcasting = api.sendMessage(headers, { to: "*", content: "all hands" });
    await held.untilWaiting(2);
    await held.release();
    const [revoked, broadcast] = await Promise.all([revoking, broadcasting]);
    expect(revoked.status, JSON.stringify(revoked.json)).toBe(200);
    expect(broadcast.status, JSON.stringify(broadcast.json)).toBe(201);
    const token = await db.apiToken.findUniqueOrThrow({ where: { id: connect.id } });
    expect(token.revokedAt).not.toBeNull();
  });

  it("a teammate's connect and a broadcast both land, whichever waits for the other", async () => {
    // Red team, by reading: the connect locked its session's agent, then the teammate's; the
    // broadcast, in id order, held the teammate's and waited for the session's: a 503.
    const headers = (await lead()).headers;
    const connect = await createToken("connect");
    const teammateOf = (sessionId: string) => ({
      sessionId,
      cwd: "/srv/lock-order",
      agentId: "t1",
      agentType: "reviewer",
    });
    for (;;) {
      const sessionId = randomUUID();
      const first = await api.connectSession(connect.headers, teammateOf(sessionId));
      expect(first.status, JSON.stringify(first.json)).toBe(201);
      const agents = await db.agent.findMany({
        where: { ownerTokenId: connect.id, connector: { path: ["sessionId"], equals: sessionId } },
      });
      const isTeammate = (agent: (typeof agents)[number]) =>
        (agent.connector as { agentId: string | null }).agentId !== null;
      const teammate = agents.find(isTeammate);
      const session = agents.find((agent) => !isTeammate(agent));
      if (!teammate || !session || teammate.id > session.id) continue;
      // The connect takes the session's agent first and waits; the broadcast took the teammate's.
      const held = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [session.id]);
      const connecting = api.connectSession(connect.headers, teammateOf(sessionId));
      await held.untilWaiting(1);
      const broadcasting = api.sendMessage(headers, { to: "*", content: "all hands" });
      await held.untilWaiting(2);
      await held.release();
      const [connected, broadcast] = await Promise.all([connecting, broadcasting]);
      expect(connected.status, JSON.stringify(connected.json)).toBe(200);
      expect(broadcast.status, JSON.stringify(broadcast.json)).toBe(201);
      return;
    }
  });

  it("a broadcast reaches those still active when one ends while it waits", async () => {
    // It was refused whole (409 AGENT_NOT_ACTIVE) for the one agent that had stopped.
    const headers = (await lead()).headers;
    const agents = await Promise.all([registerAgent(), registerAgent()]);
    const rows = await Promise.all(
      agents.map((agent) => db.agent.findUniqueOrThrow({ where: { name: agent.name } })),
    );
    rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    const [waitedFor, stopping] = rows;
    const held = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [waitedFor?.id]);
    const broadcasting = api.sendMessage(headers, { to: "*", content: "all hands" });
    await held.untilWaiting(1);
    expect((await api.forceStop(headers, String(stopping?.name))).status).toBe(200);
    await held.release();
    const broadcast = await broadcasting;
    expect(broadcast.status, JSON.stringify(broadcast.json)).toBe(201);
    const recipients = (broadcast.json.items as { to: string }[]).map((message) => message.to);
    expect(recipients).toContain(waitedFor?.name);
    expect(recipients).not.toContain(stopping?.name);
    expect(recipients).toEqual([...recipients].sort());
    const named = await api.sendMessage(headers, { to: stopping?.name, content: "you there?" });
    expect(named.json).toMatchObject({ error: { code: "AGENT_NOT_ACTIVE" } });
  });

  it("a deadlock PostgreSQL breaks is a retryable 503 that changed nothing, not a 500", async () => {
    const headers = (await lead()).headers;
    const { connect, byId } = await agentsInCrossedOrder();
    // Another session holds the second agent by id, then waits for the first, which the
    // revocation holds: PostgreSQL aborts the revocation (the holder checks for a deadlock late).
    const held = await holdLock("SET LOCAL deadlock_timeout = '10s'");
    await held.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [byId[1]?.id]);
    const revoking = callRoute(tokenRoute.DELETE, {
      method: "DELETE",
      path: `/api/v1/tokens/${connect.id}`,
      headers,
      params: { id: connect.id },
    });
    // Waiting on the second agent, it holds the first: the holder's wait below closes the cycle.
    await held.untilWaiting(1);
    const holderWaits = held.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [byId[0]?.id]);
    const revoked = await revoking;
    await holderWaits;
    await held.release();
    expect(revoked.status, JSON.stringify(revoked.json)).toBe(503);
    expect(revoked.json).toMatchObject({ error: { code: "TRANSACTION_CONFLICT" } });
    expect(revoked.headers.get("retry-after")).toBe("1");
    const token = await db.apiToken.findUniqueOrThrow({ where: { id: connect.id } });
    expect(token.revokedAt).toBeNull();
    expect((await api.revokeToken(headers, connect.id)).status).toBe(200);
  });
});
