import { afterAll, describe, expect, it, vi } from "vitest";
import { agents as agentsRoute } from "../../lib/api/v1/agents";
import { getDb } from "../../lib/db";
import { RECENT_GONE_ON_BOARD } from "../../lib/shared/agents/board";
import { callRoute } from "../route-client";
import { api, lead, registerAgent, submitPlan } from "./fixtures";

// The board reads every agent: tens of thousands of them go on a database of its own (decision
// 079), where the counts are this file's alone.
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_board_scale");
});

afterAll(() => getDb().$disconnect());

type Row = { name: string; status: string };
type Board = { items: Row[]; olderGone: number };

async function listAgents(query: string) {
  const response = await callRoute(agentsRoute.GET, {
    path: `/api/v1/agents${query}`,
    headers: (await lead()).headers,
  });
  return { status: response.status, json: response.json as Board };
}

/** Agents as a `connect` token's sessions leave them: ended or offline, `age` ago and older. */
async function insertGone(prefix: string, count: number, age: string): Promise<void> {
  await getDb().$executeRaw`
    INSERT INTO agents (name, role, status, token_hash, updated_at)
    SELECT ${prefix} || '-' || n, 'session',
           (CASE WHEN n % 2 = 0 THEN 'shutdown' ELSE 'offline' END)::agent_status,
           ${prefix} || '-token-' || n, now() - ${age}::interval - n * interval '1 second'
    FROM generate_series(1, ${count}) AS n`;
}

describe("GET /api/v1/agents when agents are never pruned (red team)", () => {
  it("shows the present team and the latest 500 gone, says how many it leaves out, and all when asked", async () => {
    await insertGone("day", RECENT_GONE_ON_BOARD + 100, "1 day");
    const oldest = `day-${RECENT_GONE_ON_BOARD + 100}`;
    const oldestOffline = `day-${RECENT_GONE_ON_BOARD + 99}`;
    // A request pending keeps its agent in view, offline or crashed, however long ago.
    const orphaned = await registerAgent({ requirePlan: true });
    const crashed = await registerAgent({ requirePlan: true });
    for (const [agent, status] of [
      [orphaned, "offline"],
      [crashed, "crashed"],
    ] as const) {
      await submitPlan(agent);
      await getDb().agent.update({
        where: { name: agent.name },
        data: { status, updatedAt: new Date(Date.now() - 2 * 86_400_000) },
      });
    }
    // Offline, but heard from within the hour: present, however long ago its row last changed.
    const quiet = await registerAgent();
    await getDb().agent.update({
      where: { name: quiet.name },
      data: {
        status: "offline",
        lastHeartbeatAt: new Date(Date.now() - 30 * 60_000),
        updatedAt: new Date(Date.now() - 3 * 86_400_000),
      },
    });
    const stopped = await registerAgent();
    await api.forceStop((await lead()).headers, stopped.name);
    const live = await registerAgent();

    const board = await listAgents("");
    expect(board.status).toBe(200);
    const names = new Set(board.json.items.map((row) => row.name));
    for (const agent of [live, stopped, orphaned, crashed, quiet]) {
      expect(names.has(agent.name), agent.name).toBe(true);
    }
    expect(names.has(oldest)).toBe(false);
    expect(names.has(oldestOffline)).toBe(false);
    // Gone: the 600 sessions and the stopped agent; shown, the latest 500 of them.
    expect(board.json.olderGone).toBe(RECENT_GONE_ON_BOARD + 101 - RECENT_GONE_ON_BOARD);
    expect(board.json.items).toHaveLength(RECENT_GONE_ON_BOARD + 4);

    const all = await listAgents("?gone=all");
    expect(all.json.olderGone).toBe(0);
    expect(all.json.items).toHaveLength(RECENT_GONE_ON_BOARD + 105);
    const allNames = new Set(all.json.items.map((row) => row.name));
    for (const name of [oldest, oldestOffline, live.name]) expect(allNames.has(name)).toBe(true);
    expect((await listAgents("?gone=some")).status).toBe(400);
  });

  it("answers every agent past the 32,767 parameters a statement takes", async () => {
    await insertGone("year", 33_000, "1 year");
    const all = await listAgents("?gone=all");
    expect(all.status).toBe(200);
    expect(all.json.items.length).toBeGreaterThan(33_000);
    const board = await listAgents("");
    expect(board.status).toBe(200);
    expect(board.json.olderGone).toBeGreaterThan(33_000);
  }, 60_000);
});
