import { afterAll, describe, expect, it, vi } from "vitest";

// Small limits for this file only; lib/env.ts reads them when first imported.
vi.hoisted(() => {
  process.env.HANDSHAKE_AGENT_MESSAGES_PER_MINUTE = "3";
  process.env.HANDSHAKE_AGENT_REQUESTS_PER_MINUTE = "3";
  process.env.HANDSHAKE_AGENT_TOOL_CALLS_PER_MINUTE = "3";
  process.env.HANDSHAKE_AGENT_OPEN_LONG_POLLS = "2";
  process.env.HANDSHAKE_AGENT_STATE_CHANGES_PER_MINUTE = "3";
  process.env.HANDSHAKE_CONNECT_MAX_ACTIVE_SESSIONS = "3";
  process.env.HANDSHAKE_CONNECT_STARTS_PER_MINUTE = "5";
});

import { takeLongPollSlot } from "../../lib/agents/limits";
import { inbox as inboxRoute } from "../../lib/api/v1/messages";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import {
  api,
  createTask,
  createToken,
  lead,
  registerAgent,
  registerWorker,
  uniqueName,
  type TestToken,
} from "./fixtures";

// Issue 12, item 11: an agent holding a valid token cannot flood the server.

afterAll(() => getDb().$disconnect());

function expectRateLimited(response: { status: number; json: Record<string, unknown> }) {
  expect(response.status, JSON.stringify(response.json)).toBe(429);
  expect(response.json).toMatchObject({ error: { code: "RATE_LIMITED" } });
}

describe("per-agent limits", () => {
  it("caps messages per minute, with Retry-After, and stores nothing past the cap", async () => {
    const agent = await registerAgent();
    for (let i = 0; i < 3; i++) {
      expect((await api.sendMessage(agent.headers, { to: "lead", content: `m${i}` })).status).toBe(
        201,
      );
    }
    const before = await getDb().message.count({ where: { sender: agent.name } });
    const refused = await callRoute((await import("../../lib/api/v1/messages")).messages.POST, {
      path: "/api/v1/messages",
      body: { to: "lead", content: "one too many" },
      headers: agent.headers,
    });
    expectRateLimited(refused as { status: number; json: Record<string, unknown> });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await getDb().message.count({ where: { sender: agent.name } })).toBe(before);
    // Another agent is not affected, and the Lead is not an agent.
    const other = await registerAgent();
    expect((await api.sendMessage(other.headers, { to: "lead", content: "hi" })).status).toBe(201);
    expect(
      (await api.sendMessage((await lead()).headers, { to: agent.name, content: "hi" })).status,
    ).toBe(201);
  });

  it("caps requests and tool-call records per minute", async () => {
    const agent = await registerAgent();
    for (let i = 0; i < 3; i++) {
      await api.submitRequest(agent.headers, { type: "plan_approval", payload: { plan: `${i}` } });
    }
    expectRateLimited(
      await api.submitRequest(agent.headers, { type: "plan_approval", payload: { plan: "x" } }),
    );
    for (let i = 0; i < 3; i++) {
      await api.toolCall(agent.headers, { tool: "read_file", args: { path: `${i}` } });
    }
    const records = await getDb().toolCall.count({ where: { agent: { name: agent.name } } });
    expectRateLimited(
      await api.toolCall(agent.headers, { tool: "read_file", args: { path: "x" } }),
    );
    expect(await getDb().toolCall.count({ where: { agent: { name: agent.name } } })).toBe(records);
  });

  it("caps open long-polls and frees the slot when one ends", async () => {
    const agent = await registerAgent();
    const controller = new AbortController();
    const poll = () =>
      inboxRoute.GET(
        new Request("http://127.0.0.1:3000/api/v1/inbox?wait=5", {
          headers: { host: "127.0.0.1:3000", ...agent.headers },
          signal: controller.signal,
        }),
      );
    const open = [poll(), poll()];
    const { id } = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    await untilEverySlotIsTaken(id);
    const third = await api.inbox(agent.headers, "?wait=5");
    expectRateLimited(third);
    controller.abort();
    await Promise.all(open);
    expect((await api.inbox(agent.headers, "?wait=0")).status).toBe(200);
  });

  it("counts an agent's inbox long-polls apart from its request waits, and gives a released slot back", async () => {
    const { id } = await getDb().agent.findUniqueOrThrow({
      where: { name: (await registerAgent()).name },
    });
    const inboxSlots = [takeLongPollSlot(id), takeLongPollSlot(id)];
    const requestWait = takeLongPollSlot(id, "request_wait");
    try {
      expect(() => takeLongPollSlot(id)).toThrow(/at most 2 open inbox long-polls/);
      inboxSlots[0]?.release();
      inboxSlots[0]?.release();
      inboxSlots.push(takeLongPollSlot(id));
      expect(() => takeLongPollSlot(id)).toThrow(/at most 2 open inbox long-polls/);
    } finally {
      for (const slot of [...inboxSlots, requestWait]) slot.release();
    }
  });

  it("takes a slot only for a long-poll that waits: one answered at once is never refused", async () => {
    const agent = await registerAgent();
    await api.sendMessage((await lead()).headers, { to: agent.name, content: "waiting for you" });
    const { cursor } = (await api.inbox(agent.headers)).json as { cursor: number };
    // Both slots taken as two waiting long-polls take them. Held by real long-polls, a probe
    // sent before they had reached their slots took one and waited out its own 5 s.
    const { id } = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    const held = [takeLongPollSlot(id), takeLongPollSlot(id)];
    try {
      expectRateLimited(await api.inbox(agent.headers, `?after=${cursor}&wait=5`));
      const answered = await api.inbox(agent.headers, "?after=0&wait=5");
      expect(answered.status).toBe(200);
      expect((answered.json.messages as { content: string }[]).map((m) => m.content)).toEqual([
        "waiting for you",
      ]);
    } finally {
      for (const slot of held) slot.release();
    }
  });
});

/**
 * Resolves once the agent's inbox long-poll slots are all taken. A probe that finds one free gives
 * it back before anything else runs: the long-polls it waits for are never refused for it.
 */
async function untilEverySlotIsTaken(agentId: string): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    try {
      takeLongPollSlot(agentId).release();
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the long-polls never took their slots");
}

function eventsAbout(name: string) {
  return getDb().event.count({ where: { subject: `agent:${name}` } });
}

describe("per-agent limits on state changes (red team: every change is an event on every console)", () => {
  it("caps heartbeats that flip status and tool host, and never refuses one that changes nothing", async () => {
    const agent = await registerWorker();
    const flip = [
      { status: "idle", toolHost: "no_sandbox" },
      { status: "working", toolHost: "sandboxed" },
    ];
    for (let i = 0; i < 3; i++) {
      expect((await api.heartbeat(agent.headers, flip[i % 2])).status).toBe(200);
    }
    const events = await eventsAbout(agent.name);
    const beforeRefused = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    const refused = await callRoute((await import("../../lib/api/v1/agent-self")).heartbeat.POST, {
      path: "/api/v1/heartbeat",
      body: flip[1],
      headers: agent.headers,
    });
    expectRateLimited(refused as { status: number; json: Record<string, unknown> });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await eventsAbout(agent.name)).toBe(events);
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    expect([row.status, row.toolHost]).toEqual(["idle", "no_sandbox"]);
    // Refused for the rate, the heartbeat still said the agent is alive: the sweeper must not
    // take a busy worker for a silent one.
    expect(row.lastHeartbeatAt!.getTime()).toBeGreaterThan(
      beforeRefused.lastHeartbeatAt!.getTime(),
    );
    // Its sign of life still counts, however often it comes.
    for (let i = 0; i < 20; i++) {
      expect((await api.heartbeat(agent.headers, flip[0])).status).toBe(200);
      expect((await api.heartbeat(agent.headers, { status: "idle" })).status).toBe(200);
    }
    const after = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    expect(after.lastHeartbeatAt!.getTime()).toBeGreaterThan(row.lastHeartbeatAt!.getTime());
    expect(await eventsAbout(agent.name)).toBe(events);
  });

  it("caps task claims and releases, leaving the task as it was", async () => {
    const agent = await registerAgent();
    const taskId = await createTask();
    expect((await api.claimTask(agent.headers, taskId)).status).toBe(200);
    expect((await api.releaseTask(agent.headers, taskId)).status).toBe(200);
    expect((await api.claimTask(agent.headers, taskId)).status).toBe(200);
    const events = await getDb().event.count({ where: { subject: `task:${taskId}` } });
    expectRateLimited(await api.releaseTask(agent.headers, taskId));
    const task = await getDb().task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task.status).toBe("claimed");
    expect(await getDb().event.count({ where: { subject: `task:${taskId}` } })).toBe(events);
  });
});

describe("active sessions per connect token (red team: each session has limits of its own)", () => {
  const sessionBody = (sessionId: string) => ({ sessionId, cwd: "/home/u/proj" });
  const activeOf = (token: TestToken) =>
    getDb().agent.count({
      where: { ownerTokenId: token.id, status: { notIn: ["shutdown", "crashed"] } },
    });

  it("refuses a new session past the cap, saying how to free one; the token's own still connect", async () => {
    const connect = await createToken("connect");
    const tokens: Record<string, string> = {};
    for (const id of ["flood-0", "flood-1", "flood-2"]) {
      const created = await api.connectSession(connect.headers, sessionBody(id));
      expect(created.status).toBe(201);
      tokens[id] = String(created.json.token);
    }
    const refused = await api.connectSession(connect.headers, sessionBody("flood-3"));
    expectRateLimited(refused);
    expect(refused.json.error?.message).toMatch(/end one/);
    expect(await getDb().agent.count({ where: { ownerTokenId: connect.id } })).toBe(3);
    // A live session connecting again is not a new one.
    expect((await api.connectSession(connect.headers, sessionBody("flood-0"))).status).toBe(200);
    // An ended session frees its place, and coming back takes one.
    const ended = { authorization: `Bearer ${tokens["flood-1"]}` };
    expect((await api.heartbeat(ended, { status: "ended" })).status).toBe(200);
    expect((await api.connectSession(connect.headers, sessionBody("flood-3"))).status).toBe(201);
    expectRateLimited(await api.connectSession(connect.headers, sessionBody("flood-1")));
    expect(await activeOf(connect)).toBe(3);
  });

  it("counts no session or teammate silent for ten minutes, which nothing may ever end", async () => {
    // Review of round ten: a finished subagent's teammate stays idle, and a session whose
    // SessionEnd never came stays too; counted, they filled the cap for good.
    const connect = await createToken("connect");
    for (const id of ["quiet-0", "quiet-1", "quiet-2"]) {
      expect((await api.connectSession(connect.headers, sessionBody(id))).status).toBe(201);
    }
    expectRateLimited(await api.connectSession(connect.headers, sessionBody("quiet-3")));
    await getDb().agent.updateMany({
      where: { ownerTokenId: connect.id, connector: { path: ["sessionId"], equals: "quiet-0" } },
      data: { lastHeartbeatAt: new Date(Date.now() - 11 * 60_000) },
    });
    expect((await api.connectSession(connect.headers, sessionBody("quiet-3"))).status).toBe(201);
    // Heard from again, the quiet one is back, and holds a place again.
    expect((await api.connectSession(connect.headers, sessionBody("quiet-0"))).status).toBe(200);
    expectRateLimited(await api.connectSession(connect.headers, sessionBody("quiet-4")));
  });

  it("counts agents the token registers or respawns through the API with its sessions", async () => {
    // Round eleven: `POST /agents` with the token made uncapped agents, each with limits of its own.
    const connect = await createToken("connect");
    expect((await api.connectSession(connect.headers, sessionBody("mixed-0"))).status).toBe(201);
    const [first, second, third] = [uniqueName("reg"), uniqueName("reg"), uniqueName("reg")];
    for (const name of [first, second]) {
      expect((await api.registerAgent(connect.headers, { name, role: "dev" })).status).toBe(201);
    }
    const refused = await api.registerAgent(connect.headers, { name: third, role: "dev" });
    expectRateLimited(refused);
    expect(refused.json.error?.message).toMatch(/end one/);
    expect(await getDb().agent.count({ where: { name: third } })).toBe(0);
    expectRateLimited(await api.connectSession(connect.headers, sessionBody("mixed-1")));

    // Starting again an agent that holds a place (offline, but heard from) takes none; an ended
    // one frees its place, and coming back takes one.
    await getDb().agent.update({ where: { name: first }, data: { status: "offline" } });
    expect((await api.respawn(connect.headers, first)).status).toBe(201);
    await getDb().agent.update({ where: { name: second }, data: { status: "shutdown" } });
    expect((await api.registerAgent(connect.headers, { name: third, role: "dev" })).status).toBe(
      201,
    );
    // The cap's refusal, not the starts rate's: this token has started five.
    for (const refused of [
      await api.respawn(connect.headers, second),
      await api.registerAgent(connect.headers, { name: second, role: "dev" }),
    ]) {
      expectRateLimited(refused);
      expect(refused.json.error?.message).toMatch(/end one/);
    }
    expect(await getDb().agent.findUniqueOrThrow({ where: { name: second } })).toMatchObject({
      status: "shutdown",
    });
    expect(await activeOf(connect)).toBe(3);
  });

  it.each([
    [
      "a tool call",
      (headers: Record<string, string>) =>
        api.toolCall(headers, { tool: "read_file", args: { path: "a" } }),
    ],
    [
      "a request",
      (headers: Record<string, string>) =>
        api.submitRequest(headers, { type: "plan_approval", payload: { plan: "p" } }),
    ],
    [
      "a message",
      (headers: Record<string, string>) =>
        api.sendMessage(headers, { to: "lead", content: "still here" }),
    ],
  ] as const)(
    "counts an agent the sweeper marked offline that still sends %s",
    async (_what, act) => {
      // Round eleven: only heartbeats counted, and an agent registered with the token and marked
      // offline acted on without one, so the cap bounded how fast agents started, not how many.
      const connect = await createToken("connect");
      const register = (name = uniqueName("act")) =>
        api.registerAgent(connect.headers, { name, role: "dev" });
      const acting = await register();
      expect(acting.status).toBe(201);
      const silent = { lastHeartbeatAt: null, updatedAt: new Date(Date.now() - 11 * 60_000) };
      await getDb().agent.updateMany({ where: { ownerTokenId: connect.id }, data: silent });
      const headers = { authorization: `Bearer ${String(acting.json.token)}` };
      expect((await act(headers)).status).toBeLessThan(300);
      await getDb().agent.updateMany({
        where: { ownerTokenId: connect.id },
        data: { ...silent, status: "offline" },
      });
      expect((await register()).status).toBe(201);
      expect((await register()).status).toBe(201);
      expectRateLimited(await register());
    },
  );

  it("caps how many agents a token starts per minute, however many it ends", async () => {
    // Round eleven: connecting a session and ending it at once, 100 times a minute, was never
    // refused: each end freed the place its start took, and each left a row and its events.
    const connect = await createToken("connect");
    for (let i = 0; i < 5; i++) {
      const connected = await api.connectSession(connect.headers, sessionBody(`churn-${i}`));
      expect(connected.status).toBe(201);
      const ended = { authorization: `Bearer ${String(connected.json.token)}` };
      expect((await api.heartbeat(ended, { status: "ended" })).status).toBe(200);
    }
    const refused = await api.connectSession(connect.headers, sessionBody("churn-5"));
    expectRateLimited(refused);
    expect(refused.json.error?.message).toMatch(/5 agent starts per minute/);
    expect(await getDb().agent.count({ where: { ownerTokenId: connect.id } })).toBe(5);
  });

  it("counts only the starts that commit: one refused after the cap's check spends none", async () => {
    const connect = await createToken("connect");
    const name = uniqueName("busy");
    expect((await api.registerAgent(connect.headers, { name, role: "dev" })).status).toBe(201);
    for (let i = 0; i < 6; i++) {
      // Still running: refused once the cap had let it through.
      const refused = await api.registerAgent(connect.headers, { name, role: "dev" });
      expect(refused.json.error?.code).toBe("AGENT_EXISTS");
    }
    expect((await api.connectSession(connect.headers, sessionBody("after"))).status).toBe(201);
  });

  it("lets exactly one of parallel new sessions take the last place", async () => {
    const connect = await createToken("connect");
    for (const id of ["race-0", "race-1"]) {
      expect((await api.connectSession(connect.headers, sessionBody(id))).status).toBe(201);
    }
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.connectSession(connect.headers, sessionBody(`race-new-${i}`)),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 429, 429, 429, 429, 429]);
    expect(await activeOf(connect)).toBe(3);
  });
});
