import { afterAll, describe, expect, it } from "vitest";
import { agents as agentsRoute } from "../../lib/api/v1/agents";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import { RECENT_GONE_ON_BOARD } from "../../lib/shared/agents/board";
import { api, lead, registerAgent, submitPlan, uniqueName } from "./fixtures";

afterAll(() => getDb().$disconnect());

type Row = {
  name: string;
  status: string;
  blockedToolCalls: number;
  pendingRequests: { id: string; target: string }[];
};

async function listAgents(query: string) {
  const response = await callRoute(agentsRoute.GET, {
    path: `/api/v1/agents${query}`,
    headers: (await lead()).headers,
  });
  return {
    status: response.status,
    json: response.json as { items: Row[]; olderGone: number; error?: unknown },
  };
}

describe("GET /api/v1/agents for the team board", () => {
  it("?name= returns that agent's row alone, with what blocks it, like the whole list does", async () => {
    const blocked = await registerAgent({ requirePlan: true });
    await registerAgent();
    const planId = String((await submitPlan(blocked)).json.id);
    await api.toolCall(blocked.headers, { tool: "write_file", args: { path: "a.txt" } });

    const one = await listAgents(`?name=${blocked.name.toUpperCase()}`);
    expect(one.status).toBe(200);
    expect(one.json.items.map((row) => row.name)).toEqual([blocked.name]);
    const [row] = one.json.items;
    expect(row?.blockedToolCalls).toBe(1);
    expect(row?.pendingRequests.map((request) => request.id)).toEqual([planId]);

    const whole = await listAgents("");
    expect(whole.json.items.find((member) => member.name === blocked.name)).toEqual(row);
    expect(whole.json.items.length).toBeGreaterThan(1);
  });

  it("?name= of nobody is an empty list; a malformed name or an unknown parameter is a 400", async () => {
    expect((await listAgents("?name=nobody-here")).json.items).toEqual([]);
    const malformed = await listAgents("?name=..%2Fetc");
    expect(malformed.status).toBe(400);
    expect(malformed.json.error).toMatchObject({ code: "INVALID_INPUT" });
    const extra = await listAgents("?nmae=ada");
    expect(extra.status).toBe(400);
    expect(extra.json.error).toMatchObject({ code: "INVALID_INPUT" });
  });

  it("shows the agents that went last of those gone, not every one that ever ran, and all when asked", async () => {
    // A `connect` token's day of sessions, each ended or closed without ending (offline for good):
    // nothing prunes an agent, and the board is fetched whole every 30 s.
    const prefix = uniqueName("gone");
    await getDb().$executeRaw`
      INSERT INTO agents (name, role, status, token_hash, updated_at)
      SELECT ${prefix} || '-' || n, 'session',
             (CASE WHEN n % 2 = 0 THEN 'shutdown' ELSE 'offline' END)::agent_status,
             ${prefix} || '-token-' || n, now() - interval '1 day' - n * interval '1 second'
      FROM generate_series(1, ${RECENT_GONE_ON_BOARD + 100}) AS n`;
    const oldest = `${prefix}-${RECENT_GONE_ON_BOARD + 100}`;
    const oldestOffline = `${prefix}-${RECENT_GONE_ON_BOARD + 99}`;
    // An offline agent with a request pending is orphaned, not gone: it stays in view.
    const orphaned = await registerAgent({ requirePlan: true });
    await submitPlan(orphaned);
    await getDb().agent.update({
      where: { name: orphaned.name },
      data: { status: "offline", updatedAt: new Date(Date.now() - 2 * 86_400_000) },
    });
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
    for (const name of [live.name, stopped.name, orphaned.name, quiet.name]) {
      expect(names.has(name)).toBe(true);
    }
    expect(names.has(oldest)).toBe(false);
    expect(names.has(oldestOffline)).toBe(false);
    expect(board.json.olderGone).toBeGreaterThanOrEqual(100);

    const all = await listAgents("?gone=all");
    expect(all.json.olderGone).toBe(0);
    const allNames = new Set(all.json.items.map((row) => row.name));
    for (const name of [oldest, oldestOffline, live.name]) expect(allNames.has(name)).toBe(true);
    expect((await listAgents("?gone=some")).status).toBe(400);
  });

  it("a request.created event carries the countdown's policy, never the payload", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const requestId = String((await submitPlan(agent, "secret plan text")).json.id);
    const event = await getDb().event.findFirstOrThrow({
      where: { kind: "request.created", subject: `request:${requestId}` },
    });
    expect(event.data).toMatchObject({ requestId, timeoutPolicy: "auto-rejects" });
    expect(JSON.stringify(event.data)).not.toContain("secret plan text");
  });
});
