import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentTimeline as timelineRoute } from "../../lib/api/v1/agents";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";
import { api, lead, registerAgent, submitPlan, uniqueName, type TestAgent } from "./fixtures";

afterAll(() => getDb().$disconnect());

type Item = { key: string; at: string; kind: string } & Record<string, unknown>;
type Page = { items: Item[]; nextCursor: string | null };
type RequestJson = { id: string; status: string; respondedBy: string | null; agent: string };

async function timeline(headers: Record<string, string>, name: string, query = "") {
  const response = await callRoute(timelineRoute.GET, {
    path: `/api/v1/agents/${name}/timeline${query}`,
    headers,
    params: { name },
  });
  return { status: response.status, json: response.json as Page & { error?: { code: string } } };
}

/** Timestamps have millisecond precision; a pause keeps "newer" unambiguous between steps. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

async function readAllPages(
  read: (cursor: string | null) => Promise<Page>,
): Promise<{ items: Item[]; pages: number }> {
  const items: Item[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await read(cursor);
    items.push(...page.items);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor && pages < 50);
  return { items, pages };
}

async function decide(
  requestId: string,
  approve: boolean,
  feedback: string,
  headers?: Record<string, string>,
) {
  const response = await api.respond(headers ?? (await lead()).headers, requestId, {
    type: "plan_approval_response",
    approve,
    feedback,
  });
  expect(response.status, JSON.stringify(response.json)).toBe(200);
  return response.json as unknown as RequestJson;
}

describe("GET /api/v1/agents/{name}/timeline", () => {
  let agent: TestAgent;
  let planId: string;

  beforeAll(async () => {
    const { headers } = await lead();
    agent = await registerAgent({ requirePlan: true });
    await pause();
    expect((await api.heartbeat(agent.headers, { status: "working" })).status).toBe(200);
    await pause();
    const blocked = await api.toolCall(agent.headers, {
      tool: "write_file",
      args: { path: "a.txt" },
    });
    expect(blocked.json).toMatchObject({ allowed: false, code: "PLAN_GATE_BLOCKED" });
    await pause();
    planId = String((await submitPlan(agent)).json.id);
    await pause();
    await decide(planId, true, "go ahead, keep it small");
    await pause();
    expect(
      (await api.sendMessage(headers, { to: agent.name, content: "ping from the lead" })).status,
    ).toBe(201);

    // Another agent's activity must not leak into this timeline.
    const other = await registerAgent();
    await api.toolCall(other.headers, { tool: "write_file", args: { path: "b.txt" } });
    await api.sendMessage(headers, { to: other.name, content: "not for the first agent" });
  });

  it("merges messages, tool calls, requests and status changes, newest first", async () => {
    const { status, json } = await timeline((await lead()).headers, agent.name, "?limit=200");
    expect(status).toBe(200);
    const { items } = json;
    expect(json.nextCursor).toBeNull();

    const times = items.map((item) => Date.parse(item.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(new Set(items.map((item) => item.key)).size).toBe(items.length);

    const blocked = items.find((item) => item.kind === "tool_call");
    expect(blocked).toMatchObject({
      toolCall: {
        tool: "write_file",
        isAllowed: false,
        code: "PLAN_GATE_BLOCKED",
        gate: "required",
        reason: expect.stringMatching(/plan/i),
      },
    });
    const created = items.find(
      (item) => item.kind === "request" && item.action === "created",
    ) as Item & { request: RequestJson };
    const decided = items.find(
      (item) => item.kind === "request" && item.action === "decided",
    ) as Item & { request: RequestJson & { feedback: string } };
    expect(created.request).toMatchObject({ id: planId, status: "approved" });
    expect(decided.request).toMatchObject({
      id: planId,
      status: "approved",
      respondedBy: (await lead()).email,
      feedback: "go ahead, keep it small",
    });
    const statuses = items
      .filter((item) => item.kind === "status")
      .map((item) => (item.change as { event: string; status: string | null }).status);
    expect(statuses).toContain("waiting_approval");
    expect(statuses).toContain("working");
    expect(items.at(-1)).toMatchObject({ kind: "status", change: { event: "registered" } });

    const messages = items.filter((item) => item.kind === "message") as (Item & {
      message: { from: string; to: string; type: string; content: string };
    })[];
    expect(items[0]).toMatchObject({
      kind: "message",
      message: { from: "lead", to: agent.name, content: "ping from the lead" },
    });
    expect(messages.map((item) => item.message.type)).toEqual(
      expect.arrayContaining(["message", "plan_approval", "plan_approval_response"]),
    );
    expect(
      messages.every((item) => [item.message.from, item.message.to].includes(agent.name)),
    ).toBe(true);
    expect(JSON.stringify(items)).not.toContain("not for the first agent");

    const position = (key: string) => items.findIndex((item) => item.key === key);
    expect(position(`request:${planId}:decided`)).toBeLessThan(
      position(`request:${planId}:created`),
    );
    expect(position(`request:${planId}:created`)).toBeLessThan(position(String(blocked?.key)));
  });

  it("pages with nextCursor without losing or repeating an item", async () => {
    const { headers } = await lead();
    const whole = (await timeline(headers, agent.name, "?limit=200")).json.items;
    expect(whole.length).toBeGreaterThan(8);
    const { items, pages } = await readAllPages(async (cursor) => {
      const query = `?limit=3${cursor ? `&before=${encodeURIComponent(cursor)}` : ""}`;
      const response = await timeline(headers, agent.name, query);
      expect(response.status).toBe(200);
      expect(response.json.items.length).toBeLessThanOrEqual(3);
      return response.json;
    });
    expect(pages).toBe(Math.ceil(whole.length / 3));
    expect(items.map((item) => item.key)).toEqual(whole.map((item) => item.key));
  });

  it("keeps items written in the same millisecond in one order across every page size", async () => {
    const { headers } = await lead();
    const crowded = await registerAgent();
    const agentRow = await getDb().agent.findUniqueOrThrow({ where: { name: crowded.name } });
    // One transaction writes several rows with one timestamp; build that case on purpose.
    const at = new Date(Date.now() + 1_000);
    const db = getDb();
    for (const tool of ["write_file", "bash", "edit_file"]) {
      await db.toolCall.create({
        data: {
          agentId: agentRow.id,
          incarnation: 1,
          tool,
          args: {},
          gate: "required",
          isAllowed: false,
          code: "PLAN_GATE_BLOCKED",
          reason: "blocked",
          createdAt: at,
        },
      });
    }
    for (const content of ["one", "two"]) {
      await db.message.create({
        data: {
          sender: "lead",
          recipient: crowded.name,
          agentId: agentRow.id,
          incarnation: agentRow.incarnation,
          type: "message",
          content,
          createdAt: at,
        },
      });
    }
    for (const status of ["working", "idle"]) {
      await db.event.create({
        data: {
          kind: "agent.updated",
          subject: `agent:${crowded.name}`,
          data: { agent: crowded.name, incarnation: 1, status, gate: "required" },
          createdAt: at,
        },
      });
    }
    const whole = (await timeline(headers, crowded.name, "?limit=200")).json.items;
    expect(whole.filter((item) => item.at === at.toISOString())).toHaveLength(7);
    expect(whole.slice(0, 7).map((item) => item.kind)).toEqual([
      "message",
      "message",
      "status",
      "status",
      "tool_call",
      "tool_call",
      "tool_call",
    ]);
    for (let limit = 1; limit <= whole.length; limit += 1) {
      const { items } = await readAllPages(async (cursor) => {
        const query = `?limit=${limit}${cursor ? `&before=${encodeURIComponent(cursor)}` : ""}`;
        return (await timeline(headers, crowded.name, query)).json;
      });
      expect(
        items.map((item) => item.key),
        `limit=${limit}`,
      ).toEqual(whole.map((item) => item.key));
    }
  });

  it("refuses bad query parameters with 400 INVALID_INPUT", async () => {
    const { headers } = await lead();
    for (const query of [
      "?limit=0",
      "?limit=201",
      "?limit=lots",
      "?limit=1e2",
      "?limit=",
      "?before=not-a-cursor",
      `?before=${Buffer.from('{"at":"yesterday","rank":1,"id":"1"}').toString("base64url")}`,
      "?after=3",
    ]) {
      const response = await timeline(headers, agent.name, query);
      expect(response.status, query).toBe(400);
      expect(response.json.error?.code, query).toBe("INVALID_INPUT");
    }
    const badName = await timeline(headers, "Not A Name!", "");
    expect(badName.status).toBe(400);
  });

  it("answers 404 for an unknown agent", async () => {
    const response = await timeline((await lead()).headers, uniqueName("ghost"));
    expect(response.status).toBe(404);
    expect(response.json.error?.code).toBe("AGENT_NOT_FOUND");
  });

  it("lets a viewer read; refuses anonymous callers and agents", async () => {
    const viewer = await signedInHuman("viewer");
    const read = await timeline(viewer.headers, agent.name);
    expect(read.status).toBe(200);
    expect(read.json.items.length).toBeGreaterThan(0);
    expect((await timeline({}, agent.name)).status).toBe(401);
    expect((await timeline(agent.headers, agent.name)).status).toBe(403);
  });
});

describe("GET /api/v1/requests as history", () => {
  let alpha: TestAgent;
  let beta: TestAgent;
  let secondLead: Awaited<ReturnType<typeof signedInHuman>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const { headers } = await lead();
    secondLead = await signedInHuman("lead");
    alpha = await registerAgent({ requirePlan: true });
    beta = await registerAgent({ requirePlan: true });

    ids.superseded = String((await submitPlan(alpha, "first draft")).json.id);
    await pause();
    ids.rejected = String((await submitPlan(alpha, "second draft")).json.id);
    await decide(ids.rejected, false, "too vague: name the files");
    await pause();
    ids.approved = String((await submitPlan(alpha, "third draft")).json.id);
    await decide(ids.approved, true, "ship it", secondLead.headers);
    await pause();
    const shutdown = await api.requestShutdown(headers, alpha.name, { reason: "done for today" });
    ids.shutdown = String(shutdown.json.id);

    ids.cancelled = String((await submitPlan(beta)).json.id);
    await api.forceStop(headers, beta.name);
  });

  async function list(query: string, headers?: Record<string, string>) {
    const response = await api.listRequests(headers ?? (await lead()).headers, query);
    return response as typeof response & { json: { items: RequestJson[]; nextCursor: string } };
  }

  it("filters by a list of statuses, newest first", async () => {
    const response = await list(`?agent=${alpha.name}&status=superseded,approved,rejected`);
    expect(response.status).toBe(200);
    expect(response.json.items.map((request) => request.id)).toEqual([
      ids.approved,
      ids.rejected,
      ids.superseded,
    ]);
    const one = await list(`?agent=${alpha.name}&status=rejected`);
    expect(one.json.items.map((request) => request.id)).toEqual([ids.rejected]);
    const pending = await list(`?agent=${alpha.name}&status=pending`);
    expect(pending.json.items.map((request) => request.id)).toEqual([ids.shutdown]);
  });

  it("filters by decider, agent and type", async () => {
    const byDecider = await list(`?decider=${encodeURIComponent(secondLead.email.toUpperCase())}`);
    expect(byDecider.json.items.map((request) => request.id)).toEqual([ids.approved]);

    const bySystem = await list(`?decider=system&agent=${alpha.name}`);
    expect(bySystem.json.items.map((request) => request.id)).toEqual([ids.superseded]);

    const byAgent = await list(`?agent=${beta.name}&status=cancelled`);
    expect(byAgent.json.items).toEqual([
      expect.objectContaining({ id: ids.cancelled, agent: beta.name, respondedBy: "system" }),
    ]);

    const byType = await list(`?agent=${alpha.name}&type=shutdown`);
    expect(byType.json.items.map((request) => request.id)).toEqual([ids.shutdown]);
    const plans = await list(`?agent=${alpha.name}&type=plan_approval`);
    expect(plans.json.items).toHaveLength(3);
  });

  it("pages through several statuses with nextCursor in the same order as one page", async () => {
    const statuses = "superseded,rejected,pending,approved";
    const whole = await list(`?agent=${alpha.name}&status=${statuses}`);
    expect(whole.json.items.map((request) => request.id)).toEqual([
      ids.shutdown,
      ids.approved,
      ids.rejected,
      ids.superseded,
    ]);
    const { items } = await readAllPages(async (cursor) => {
      const query = `?agent=${alpha.name}&status=${statuses}&limit=1${cursor ? `&cursor=${cursor}` : ""}`;
      return (await list(query)).json as unknown as Page;
    });
    expect(items.map((request) => request.id)).toEqual(
      whole.json.items.map((request) => request.id),
    );
  });

  it("refuses bad filters with 400 INVALID_INPUT", async () => {
    for (const query of [
      "?status=approved,bogus",
      "?status=",
      "?status=,",
      "?decider=",
      "?decider=%20%20",
      "?limit=500",
      "?cursor=garbage",
      "?sort=asc",
    ]) {
      const response = await list(query);
      expect(response.status, query).toBe(400);
      expect(response.json.error?.code, query).toBe("INVALID_INPUT");
    }
  });

  it("lets a viewer read; refuses anonymous callers", async () => {
    const viewer = await signedInHuman("viewer");
    const read = await list(`?agent=${alpha.name}&status=approved`, viewer.headers);
    expect(read.status).toBe(200);
    expect(read.json.items.map((request) => request.id)).toEqual([ids.approved]);
    expect((await list("?status=approved", {})).status).toBe(401);
  });
});

describe("GET /api/v1/agents for the team board", () => {
  it("counts blocked tool calls of the current incarnation and lists pending requests", async () => {
    const agent = await registerAgent({ name: uniqueName("board"), requirePlan: true });
    await api.toolCall(agent.headers, { tool: "write_file", args: { path: "a.txt" } });
    await api.toolCall(agent.headers, { tool: "edit_file", args: { path: "a.txt" } });
    await api.toolCall(agent.headers, { tool: "read_file", args: { path: "a.txt" } });
    const planId = String((await submitPlan(agent)).json.id);

    const { json } = await api.listAgents((await lead()).headers);
    const member = (json.items as Record<string, unknown>[]).find(
      (item) => item.name === agent.name,
    );
    expect(member).toMatchObject({
      blockedToolCalls: 2,
      taskTitle: null,
      pendingRequests: [expect.objectContaining({ id: planId, timeoutPolicy: "auto-rejects" })],
    });
  });
});
