import { afterAll, describe, expect, it } from "vitest";
import { agents as agentsRoute } from "../../lib/api/v1/agents";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import { api, lead, registerAgent, submitPlan } from "./fixtures";

afterAll(() => getDb().$disconnect());

type Row = {
  name: string;
  blockedToolCalls: number;
  pendingRequests: { id: string; target: string }[];
};

async function listAgents(query: string) {
  const response = await callRoute(agentsRoute.GET, {
    path: `/api/v1/agents${query}`,
    headers: (await lead()).headers,
  });
  return { status: response.status, json: response.json as { items: Row[]; error?: unknown } };
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
