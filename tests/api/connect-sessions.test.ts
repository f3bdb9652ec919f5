import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { markSilentAgentsOffline } from "../../lib/agents/mutations";
import { getDb } from "../../lib/db";
import { PLAN_REQUIRED_REASON } from "../../lib/protocol/connector-gate";
import { runEventBridgeDuringFile } from "../support/event-bridge-hooks";
import { api, createToken, lead, registerAgent, type TestToken } from "./fixtures";

// Marking silent agents offline ahead of the clock takes every agent in the database: on a database
// of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_connect");
});

runEventBridgeDuringFile();

type Session = {
  name: string;
  token: string;
  headers: Record<string, string>;
  agent: Record<string, unknown>;
};

function sessionBody(overrides: Record<string, unknown> = {}) {
  return { sessionId: randomUUID(), cwd: "/home/ada/src/API Server", model: "opus", ...overrides };
}

async function connect(connectToken: TestToken, body: Record<string, unknown>): Promise<Session> {
  const response = await api.connectSession(connectToken.headers, body);
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`connect failed: ${JSON.stringify(response.json)}`);
  }
  const agent = response.json.agent as Record<string, unknown>;
  const token = String(response.json.token);
  return { name: String(agent.name), token, headers: { authorization: `Bearer ${token}` }, agent };
}

/** The session's next connect is refused, and hands out no token: the Lead's stop stuck. */
async function expectStoppedForGood(connectToken: TestToken, body: Record<string, unknown>) {
  const again = await api.connectSession(connectToken.headers, body);
  expect(again.status).toBe(409);
  expect(again.json.error?.code).toBe("AGENT_NOT_ACTIVE");
  expect(again.json.token).toBeUndefined();
}

async function pendingApprovals(name: string) {
  return getDb().request.findMany({
    where: { agent: { name }, type: "tool_approval", status: "pending" },
    orderBy: { createdAt: "asc" },
  });
}

const approve = { type: "tool_approval_response", approve: true };

describe("POST /api/v1/connect/sessions", () => {
  it("answers the same session with the same agent and token, 201 then 200", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody();
    const first = await api.connectSession(connectToken.headers, body);
    const second = await api.connectSession(connectToken.headers, body);
    expect(first.status).toBe(201);
    expect(first.json.created).toBe(true);
    expect(second.status).toBe(200);
    expect(second.json.created).toBe(false);
    expect(second.json.token).toBe(first.json.token);
    expect(second.json.agent).toEqual(first.json.agent);
    expect(first.json.agent).toMatchObject({
      name: expect.stringMatching(/^api-server-[0-9a-f]{4}$/),
      status: "idle",
      toolHost: "external",
      gate: "not_required",
      connector: {
        sessionId: body.sessionId,
        agentId: null,
        cwd: "/home/ada/src/API Server",
        model: "opus",
        parent: null,
      },
    });
    const me = await api.me({ authorization: `Bearer ${String(first.json.token)}` });
    expect(me.json).toMatchObject({ name: (first.json.agent as { name: string }).name });
  });

  it("10 concurrent calls for one session make one agent, all with the same token", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => api.connectSession(connectToken.headers, body)),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 201,
    ]);
    expect(new Set(answers.map((answer) => answer.json.token)).size).toBe(1);
    expect(answers.filter((answer) => answer.json.created === true)).toHaveLength(1);
    expect(
      await getDb().agent.count({
        where: { connector: { path: ["sessionId"], equals: body.sessionId } },
      }),
    ).toBe(1);
  });

  it("gives other sessions, other tokens and teammates agents of their own", async () => {
    const connectToken = await createToken("connect");
    const otherToken = await createToken("connect");
    const body = sessionBody({ cwd: "/srv/Repo_One/" });
    const session = await connect(connectToken, body);
    const otherSession = await connect(connectToken, sessionBody({ cwd: "/srv/Repo_One" }));
    const sameIdOtherToken = await connect(otherToken, body);
    const teammate = await connect(connectToken, {
      ...body,
      agentId: "a1b2c3",
      agentType: "code-reviewer",
    });
    const teammateAgain = await connect(connectToken, { ...body, agentId: "a1b2c3" });
    const names = [session, otherSession, sameIdOtherToken, teammate].map((s) => s.name);
    expect(new Set(names).size).toBe(4);
    expect(
      new Set([session, otherSession, sameIdOtherToken, teammate].map((s) => s.token)).size,
    ).toBe(4);
    expect(session.name).toMatch(/^repo-one-[0-9a-f]{4}$/);
    expect(teammate.name).toMatch(new RegExp(`^${session.name}-t[0-9a-f]{4}$`));
    expect(teammate.agent).toMatchObject({
      role: "code-reviewer",
      connector: { agentId: "a1b2c3", agentType: "code-reviewer", parent: session.name },
    });
    expect(teammateAgain.token).toBe(teammate.token);
    // A teammate whose session was never registered brings its session's agent with it.
    const lone = await connect(connectToken, sessionBody({ cwd: "/x", agentId: "t1" }));
    expect(lone.agent).toMatchObject({
      connector: { parent: expect.stringMatching(/^x-[0-9a-f]{4}$/) },
    });
    // A session started from another records it as its parent.
    const child = await connect(connectToken, sessionBody({ parentSessionId: body.sessionId }));
    expect(child.agent).toMatchObject({ connector: { parent: session.name } });
  });

  it("never takes over an agent that already has the session's name", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody({ cwd: "/srv/taken" });
    const digits = createHash("sha256")
      .update(`${connectToken.id}/${body.sessionId}/`)
      .digest("hex");
    const squatter = await registerAgent({ name: `taken-${digits.slice(0, 4)}` });
    const session = await connect(connectToken, body);
    expect(session.name).toBe(`taken-${digits.slice(0, 6)}`);
    expect((await api.me(squatter.headers)).json).toMatchObject({
      name: squatter.name,
      incarnation: 1,
      connector: null,
    });
    expect((await connect(connectToken, body)).name).toBe(session.name);
  });

  it("refuses every caller but a connect token", async () => {
    const body = sessionBody();
    for (const scope of ["admin", "decide", "read", "supervisor"]) {
      const token = await createToken(scope);
      const answer = await api.connectSession(token.headers, body);
      expect(answer.status, scope).toBe(403);
      expect(answer.json.error?.code, scope).toBe("INSUFFICIENT_SCOPE");
    }
    const agent = await registerAgent();
    expect((await api.connectSession(agent.headers, body)).status).toBe(403);
    expect((await api.connectSession({}, body)).status).toBe(401);
    const session = await api.connectSession((await lead()).headers, body);
    expect(session.status).toBe(403);
    expect(session.json.error?.code).toBe("FORBIDDEN");
    expect(
      await getDb().agent.count({
        where: { connector: { path: ["sessionId"], equals: body.sessionId } },
      }),
    ).toBe(0);
  });

  it("refuses bad bodies with 400 INVALID_INPUT", async () => {
    const connectToken = await createToken("connect");
    const bad: Record<string, unknown>[] = [
      {},
      { cwd: "/x" },
      sessionBody({ cwd: "relative/dir" }),
      sessionBody({ cwd: "" }),
      sessionBody({ cwd: "/tmp/\u001b[31mred" }),
      sessionBody({ cwd: `/${"a".repeat(5_000)}` }),
      sessionBody({ sessionId: "../../etc" }),
      sessionBody({ sessionId: "a/b" }),
      sessionBody({ sessionId: "x".repeat(200) }),
      sessionBody({ sessionId: 42 }),
      sessionBody({ agentId: "has space" }),
      sessionBody({ model: "m".repeat(300) }),
      sessionBody({ isAdmin: true }),
    ];
    for (const body of bad) {
      const answer = await api.connectSession(connectToken.headers, body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.json.error?.code).toBe("INVALID_INPUT");
    }
  });

  it("revoking the connect token ends its agents: their tokens are refused", async () => {
    const connectToken = await createToken("connect");
    const session = await connect(connectToken, sessionBody());
    const teammate = await connect(connectToken, sessionBody({ agentId: "t9" }));
    const registered = await api.registerAgent(connectToken.headers, {
      name: `conn-${randomUUID().slice(0, 8)}`,
      role: "script",
    });
    const registeredHeaders = { authorization: `Bearer ${String(registered.json.token)}` };
    const pending = await api.toolCall(session.headers, {
      tool: "Write",
      args: { file_path: "/tmp/x", content: "x" },
    });
    expect(pending.json.code).toBe("TOOL_APPROVAL_REQUIRED");

    expect((await api.revokeToken((await lead()).headers, connectToken.id)).status).toBe(200);

    for (const headers of [session.headers, teammate.headers, registeredHeaders]) {
      const call = await api.toolCall(headers, { tool: "Read", args: { file_path: "/x" } });
      expect(call.status).toBe(401);
      expect((await api.heartbeat(headers, { status: "idle" })).status).toBe(401);
    }
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: session.name } });
    expect(row).toMatchObject({ status: "shutdown", isForcedStop: true });
    const request = await getDb().request.findUniqueOrThrow({
      where: { id: String(pending.json.requestId) },
    });
    expect(request.status).toBe("cancelled");
    expect((await api.connectSession(connectToken.headers, sessionBody())).status).toBe(401);
  });
});

describe("the gate for a connected session", () => {
  it("allows reads at once and raises a card for everything else", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const allowed = [
      { tool: "Read", args: { file_path: "/home/ada/src/API Server/a.ts" } },
      { tool: "Grep", args: { pattern: "x" } },
      { tool: "TodoWrite", args: { todos: [] } },
      { tool: "Bash", args: { command: "ls -la && cat package.json | head" } },
    ];
    for (const call of allowed) {
      const verdict = await api.toolCall(session.headers, call);
      expect(verdict.json, call.tool).toEqual({ allowed: true });
    }
    const carded = [
      { tool: "Bash", args: { command: "echo hi > notes.txt" } },
      { tool: "Bash", args: { command: "npm test" } },
      { tool: "Bash", args: { command: "cat /etc/passwd" } },
      { tool: "Write", args: { file_path: "/home/ada/a.ts", content: "x" } },
      { tool: "Edit", args: { file_path: "a.ts", old_string: "a", new_string: "b" } },
      { tool: "mcp__github__create_issue", args: { title: "x" } },
      { tool: "WebFetch", args: { url: "https://example.com" } },
      { tool: "bash", args: { command: "ls" } },
    ];
    for (const call of carded) {
      const verdict = await api.toolCall(session.headers, call);
      expect(verdict.status, call.tool).toBe(200);
      expect(verdict.json, JSON.stringify(call)).toMatchObject({
        allowed: false,
        code: "TOOL_APPROVAL_REQUIRED",
        requestId: expect.stringMatching(/^req_/),
      });
    }
    const cards = await pendingApprovals(session.name);
    expect(cards).toHaveLength(carded.length);
    expect(cards.map((card) => (card.payload as { tool: string }).tool)).toEqual(
      carded.map((call) => call.tool),
    );
    expect((await getDb().agent.findUniqueOrThrow({ where: { name: session.name } })).status).toBe(
      "waiting_approval",
    );
  });

  it("reads in the session's directory by absolute path at once, outside it with a card", async () => {
    const session = await connect(await createToken("connect"), sessionBody({ cwd: "/srv/app" }));
    const bash = (command: string, cwd?: string) =>
      api.toolCall(session.headers, { tool: "Bash", args: { command }, ...(cwd ? { cwd } : {}) });
    expect((await bash("cat /srv/app/README.md")).json).toEqual({ allowed: true });
    expect((await bash("cat /srv/other/README.md")).json.code).toBe("TOOL_APPROVAL_REQUIRED");
    // The call's own directory may narrow the session's, never widen it
    // (tests/redteam/connect-cwd-widens.test.ts).
    expect((await bash("cat README.md", "/srv/app/docs")).json).toEqual({ allowed: true });
    expect((await bash("cat /srv/app/README.md", "/srv/app/docs")).json.code).toBe(
      "TOOL_APPROVAL_REQUIRED",
    );
    expect((await bash("cat /srv/other/README.md", "/srv/other")).json.code).toBe(
      "TOOL_APPROVAL_REQUIRED",
    );
  });

  it("keeps parallel calls pending apart; an approval opens its own call once", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const write = { tool: "Write", args: { file_path: "out.txt", content: "1" }, cwd: "/w" };
    const push = { tool: "Bash", args: { command: "git push" }, cwd: "/w", timeoutSeconds: 600 };
    const [first, second] = await Promise.all([
      api.toolCall(session.headers, write),
      api.toolCall(session.headers, push),
    ]);
    expect(first.json.code).toBe("TOOL_APPROVAL_REQUIRED");
    expect(second.json.code).toBe("TOOL_APPROVAL_REQUIRED");
    expect(first.json.requestId).not.toBe(second.json.requestId);
    // Asking again while pending does not make a second card for the same call.
    expect((await api.toolCall(session.headers, write)).json).toMatchObject({
      code: "TOOL_APPROVAL_PENDING",
      requestId: first.json.requestId,
    });
    expect(await pendingApprovals(session.name)).toHaveLength(2);
    const pushCard = await getDb().request.findUniqueOrThrow({
      where: { id: String(second.json.requestId) },
    });
    expect(pushCard.expiresAt.getTime() - pushCard.createdAt.getTime()).toBeGreaterThan(590_000);
    expect(pushCard.payload).toMatchObject({ cwd: "/w" });

    const lead_ = await lead();
    expect(
      (await api.respond(lead_.headers, String(first.json.requestId), approve)).json.status,
    ).toBe("approved");
    // The other call still waits, and so does the agent.
    expect(await pendingApprovals(session.name)).toHaveLength(1);
    expect((await getDb().agent.findUniqueOrThrow({ where: { name: session.name } })).status).toBe(
      "waiting_approval",
    );
    // Another directory or other arguments are another call.
    expect((await api.toolCall(session.headers, { ...write, cwd: "/other" })).json.allowed).toBe(
      false,
    );
    expect(
      (await api.toolCall(session.headers, { ...write, args: { ...write.args, content: "2" } }))
        .json.allowed,
    ).toBe(false);
    expect((await api.toolCall(session.headers, write)).json).toEqual({
      allowed: true,
      requestId: first.json.requestId,
    });
    // Used once: the same call again needs a new approval.
    const replay = await api.toolCall(session.headers, write);
    expect(replay.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(replay.json.requestId).not.toBe(first.json.requestId);
    const again = await api.respond(lead_.headers, String(first.json.requestId), approve);
    expect(again.status).toBe(409);
    expect(again.json.error?.code).toBe("ALREADY_DECIDED");
    expect((await api.toolCall(session.headers, push)).json).toMatchObject({
      code: "TOOL_APPROVAL_PENDING",
      requestId: second.json.requestId,
    });
  });

  it("two hooks racing to use one approval: exactly one runs", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const call = { tool: "Bash", args: { command: "make deploy" }, cwd: "/w" };
    const card = await api.toolCall(session.headers, call);
    await api.respond((await lead()).headers, String(card.json.requestId), approve);
    const racing = await Promise.all(
      Array.from({ length: 5 }, () => api.toolCall(session.headers, call)),
    );
    expect(racing.filter((verdict) => verdict.json.allowed === true)).toHaveLength(1);
    expect(
      await getDb().toolCall.count({
        where: { requestId: String(card.json.requestId), isAllowed: true },
      }),
    ).toBe(1);
  });

  it("denies with the exact reason when the Lead requires a plan", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    expect((await api.requirePlan((await lead()).headers, session.name)).status).toBe(200);
    for (const call of [
      { tool: "Bash", args: { command: "rm notes.txt" } },
      { tool: "Write", args: { file_path: "a", content: "b" } },
      { tool: "Edit", args: { file_path: "a", old_string: "a", new_string: "b" } },
      { tool: "mcp__x__y", args: {} },
    ]) {
      expect((await api.toolCall(session.headers, call)).json, call.tool).toEqual({
        allowed: false,
        code: "PLAN_GATE_BLOCKED",
        reason: PLAN_REQUIRED_REASON,
      });
    }
    expect(PLAN_REQUIRED_REASON).toBe("the Lead requires a plan: use plan mode");
    expect(
      (await api.toolCall(session.headers, { tool: "Bash", args: { command: "ls" } })).json,
    ).toEqual({ allowed: true });
    expect(await pendingApprovals(session.name)).toHaveLength(0);
    const plan = await api.submitRequest(session.headers, {
      type: "plan_approval",
      payload: { plan: "1. edit a\n2. run tests" },
    });
    expect(plan.status).toBe(201);
  });

  it("caps how many cards one session may have pending at once", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    for (let index = 0; index < 32; index++) {
      const card = await api.toolCall(session.headers, {
        tool: "Bash",
        args: { command: `touch file-${index}` },
      });
      expect(card.json.code).toBe("TOOL_APPROVAL_REQUIRED");
    }
    const flood = await api.toolCall(session.headers, {
      tool: "Bash",
      args: { command: "touch one-too-many" },
    });
    expect(flood.status).toBe(429);
    expect(flood.json.error?.code).toBe("RATE_LIMITED");
    expect(await pendingApprovals(session.name)).toHaveLength(32);
    // A call already waiting still answers with its own card.
    const waiting = await api.toolCall(session.headers, {
      tool: "Bash",
      args: { command: "touch file-0" },
    });
    expect(waiting.json.code).toBe("TOOL_APPROVAL_PENDING");
  });

  it("lets the agent raise its own tool approvals, one pending per call", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const ask = (command: string) =>
      api.submitRequest(session.headers, {
        type: "tool_approval",
        payload: { tool: "Bash", args: { command } },
      });
    const a = await ask("make deploy");
    const b = await ask("make clean");
    const a2 = await ask("make deploy");
    expect([a.status, b.status, a2.status]).toEqual([201, 201, 201]);
    const stored = await getDb().request.findUniqueOrThrow({ where: { id: String(a.json.id) } });
    expect(stored.status).toBe("superseded");
    expect((stored.payload as { risk: { class: string } }).risk.class).toBe("needs_approval");
    expect((await pendingApprovals(session.name)).map((card) => card.id).sort()).toEqual(
      [String(b.json.id), String(a2.json.id)].sort(),
    );
  });
});

describe("liveness of a connected session", () => {
  it("is not marked offline by the worker heartbeat sweep, only after the long silence", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody();
    const session = await connect(connectToken, body);
    const worker = await registerAgent();
    await api.heartbeat(worker.headers, { status: "idle" });
    const inFiveMinutes = new Date(Date.now() + 5 * 60_000);
    const marked = await markSilentAgentsOffline(getDb(), inFiveMinutes);
    expect(marked).toContain(worker.name);
    expect(marked).not.toContain(session.name);
    expect((await getDb().agent.findUniqueOrThrow({ where: { name: session.name } })).status).toBe(
      "idle",
    );
    const inSevenHours = new Date(Date.now() + 7 * 3_600_000);
    expect(await markSilentAgentsOffline(getDb(), inSevenHours)).toContain(session.name);
    // Its next connect brings it back, with the same token.
    const back = await connect(connectToken, body);
    expect(back.agent).toMatchObject({ status: "idle", incarnation: 1 });
    expect(back.token).toBe(session.token);
  });

  it("ends at SessionEnd; a resumed session is a new incarnation, a Lead's stop sticks", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody();
    const session = await connect(connectToken, body);
    const card = await api.toolCall(session.headers, { tool: "Bash", args: { command: "make" } });
    const ended = await api.heartbeat(session.headers, { status: "ended" });
    expect(ended.json).toMatchObject({ status: "shutdown", isForcedStop: false });
    expect((await api.me(session.headers)).status).toBe(401);
    expect(
      (await getDb().request.findUniqueOrThrow({ where: { id: String(card.json.requestId) } }))
        .status,
    ).toBe("cancelled");

    const resumed = await connect(connectToken, body);
    expect(resumed.name).toBe(session.name);
    expect(resumed.token).not.toBe(session.token);
    expect(resumed.agent).toMatchObject({ incarnation: 2, status: "idle" });
    expect((await connect(connectToken, body)).token).toBe(resumed.token);

    await api.forceStop((await lead()).headers, session.name);
    const refused = await api.connectSession(connectToken.headers, body);
    expect(refused.status).toBe(409);
    expect(refused.json.error?.code).toBe("AGENT_NOT_ACTIVE");
  });

  it("a session that ends while the Lead's shutdown is pending cannot connect back", async () => {
    // Red team: ending itself cancelled the Lead's shutdown, and so its force-stop on timeout, and
    // the next connect resumed the session as a new incarnation whose reads ran at once.
    const connectToken = await createToken("connect");
    const body = sessionBody({ cwd: "/home/u/proj" });
    const session = await connect(connectToken, body);
    const shutdown = await api.requestShutdown((await lead()).headers, session.name, {
      reason: "stop now",
      timeoutSeconds: 120,
    });
    expect(shutdown.status).toBe(201);
    const ended = await api.heartbeat(session.headers, { status: "ended" });
    expect(ended.json).toMatchObject({ status: "shutdown", isForcedStop: true });
    await expectStoppedForGood(connectToken, body);
    expect(await getDb().agent.findUniqueOrThrow({ where: { name: session.name } })).toMatchObject({
      status: "shutdown",
      incarnation: 1,
      isForcedStop: true,
    });
  });

  it("a session that agreed to the Lead's shutdown, then ended, cannot connect back", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody({ cwd: "/home/u/proj" });
    const session = await connect(connectToken, body);
    const shutdown = await api.requestShutdown((await lead()).headers, session.name, {
      reason: "stop now",
    });
    const agreed = await api.respond(session.headers, String(shutdown.json.id), {
      type: "shutdown_response",
      approve: true,
    });
    expect(agreed.json.status).toBe("approved");
    const ended = await api.heartbeat(session.headers, { status: "ended" });
    expect(ended.json).toMatchObject({ status: "shutdown", isForcedStop: true });
    await expectStoppedForGood(connectToken, body);
  });

  it("the Lead's force-stop of a session that already ended sticks: it cannot connect back", async () => {
    const connectToken = await createToken("connect");
    const body = sessionBody({ cwd: "/home/u/proj" });
    const session = await connect(connectToken, body);
    expect((await api.heartbeat(session.headers, { status: "ended" })).json).toMatchObject({
      isForcedStop: false,
    });
    const stopped = await api.forceStop((await lead()).headers, session.name);
    expect(stopped.status).toBe(200);
    expect(stopped.json).toMatchObject({ status: "shutdown", incarnation: 1, isForcedStop: true });
    await expectStoppedForGood(connectToken, body);
    const recorded = await getDb().event.findFirstOrThrow({
      where: { kind: "agent.stopped", subject: `agent:${session.name}` },
      orderBy: { id: "desc" },
    });
    expect(recorded.data).toMatchObject({ isForced: true, reason: expect.stringMatching(/Lead/) });
  });

  it("a session cannot claim a sandbox on the board: its tools run unconfined", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    for (const toolHost of ["sandboxed", "no_sandbox"]) {
      const claim = await api.heartbeat(session.headers, { status: "working", toolHost });
      expect(claim.status, toolHost).toBe(403);
      expect(claim.json.error?.code, toolHost).toBe("TOOL_HOST_NOT_ALLOWED");
    }
    expect((await api.me(session.headers)).json).toMatchObject({
      status: "idle",
      toolHost: "external",
    });
    const honest = await api.heartbeat(session.headers, {
      status: "working",
      toolHost: "external",
    });
    expect(honest.json).toMatchObject({ status: "working", toolHost: "external" });
  });

  it("refuses 'ended' from a worker agent", async () => {
    const worker = await registerAgent();
    const answer = await api.heartbeat(worker.headers, { status: "ended" });
    expect(answer.status).toBe(403);
    expect((await api.me(worker.headers)).json).toMatchObject({ status: "starting" });
  });
});

describe("GET /api/v1/requests/{id}?wait=", () => {
  it("returns as soon as the request is decided, for the agent and for the Lead", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const card = await api.toolCall(session.headers, { tool: "Bash", args: { command: "make" } });
    const id = String(card.json.requestId);
    const startedAt = performance.now();
    const agentWait = api.getRequest(session.headers, id, "?wait=20");
    const leadWait = api.getRequest((await lead()).headers, id, "?wait=20");
    await new Promise((resolve) => setTimeout(resolve, 300));
    await api.respond((await lead()).headers, id, {
      type: "tool_approval_response",
      approve: false,
      feedback: "not now",
    });
    for (const answer of await Promise.all([agentWait, leadWait])) {
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ id, status: "rejected", feedback: "not now" });
    }
    expect(performance.now() - startedAt).toBeLessThan(15_000);
  });

  it("caps the waits one agent may hold open", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const card = await api.toolCall(session.headers, { tool: "Bash", args: { command: "make" } });
    const id = String(card.json.requestId);
    const open = Array.from({ length: 32 }, () => api.getRequest(session.headers, id, "?wait=3"));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const extra = await api.getRequest(session.headers, id, "?wait=3");
    expect(extra.status).toBe(429);
    expect(extra.json.error?.code).toBe("RATE_LIMITED");
    expect((await Promise.all(open)).every((answer) => answer.status === 200)).toBe(true);
    expect((await api.getRequest(session.headers, id, "?wait=0")).status).toBe(200);
  });

  it("returns the pending request when the wait ends, and refuses other agents", async () => {
    const session = await connect(await createToken("connect"), sessionBody());
    const card = await api.toolCall(session.headers, { tool: "Bash", args: { command: "make" } });
    const id = String(card.json.requestId);
    const startedAt = performance.now();
    const answer = await api.getRequest(session.headers, id, "?wait=1");
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(900);
    expect(answer.json).toMatchObject({ id, status: "pending" });
    const other = await registerAgent();
    expect((await api.getRequest(other.headers, id, "?wait=1")).status).toBe(403);
    for (const query of ["?wait=31", "?wait=-1", "?wait=x", "?later=1"]) {
      expect((await api.getRequest(session.headers, id, query)).status, query).toBe(400);
    }
  });
});
