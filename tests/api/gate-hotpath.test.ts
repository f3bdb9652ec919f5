import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { ActorCache } from "../../lib/auth/actor-cache";
import {
  EVICTIONS_APPLICATION_NAME,
  startActorEvictionListener,
  type ActorEvictionListener,
} from "../../lib/auth/actor-evictions";
import { getDb, poolOf } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { getRuleCache } from "../../lib/rules/rule-cache";
import { recordToolCall } from "../../lib/tool-calls/mutations";
import { callRoute } from "../route-client";
import { holdLock } from "../support/held-lock";
import { api, createToken, lead, registerAgent, type TestAgent } from "./fixtures";

// `LOCK TABLE` holds every file's inserts into the table: on a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_gate_hotpath");
});

// The common verdict is one statement that assumes what this node last saw of the agent's row,
// and the rules come from a per-node cache (decision 028). Each test changes what a verdict
// depends on behind the assumption's back and holds the verdict to the changed row or rule.

const db = getDb();
const READ = { tool: "read_file", args: { path: "notes.txt" } };
const WRITE = { tool: "write_file", args: { path: "notes.txt", content: "x" } };
const PUSH = { tool: "bash", args: { command: "git push origin main" } };

afterAll(() => db.$disconnect());

async function actorOf(agent: TestAgent) {
  const row = await db.agent.findUniqueOrThrow({ where: { name: agent.name } });
  return { kind: "agent" as const, agentId: row.id, name: row.name, incarnation: row.incarnation };
}

/** Two calls: afterwards the node knows the agent's row and takes the common verdict. */
async function warm(
  agent: TestAgent,
  call: { tool: string; args: Record<string, unknown> } = READ,
): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    expect((await api.toolCall(agent.headers, call)).json).toMatchObject({ allowed: true });
  }
}

async function createRule(body: unknown) {
  const response = await callRoute(rulesRoute.POST, {
    path: "/api/v1/rules",
    body,
    headers: (await lead()).headers,
  });
  expect(response.status).toBe(201);
  return String((response.json as { id: string }).id);
}

/** What both paths write for an attempt, in the order they wrote it (ids and times aside). */
function recordedCallsOf(agent: TestAgent) {
  return db.toolCall.findMany({
    where: { agent: { name: agent.name } },
    orderBy: { id: "asc" },
    select: {
      incarnation: true,
      tool: true,
      args: true,
      gate: true,
      isAllowed: true,
      code: true,
      reason: true,
      risk: true,
      requestId: true,
    },
  });
}

type ToolCall = { tool: string; args: Record<string, unknown> };

/**
 * A call the full path records: the agent's row is held, so the common statement skips the row
 * and the full transaction waits for it.
 */
async function callByFullPath(agent: TestAgent, call: ToolCall) {
  const actor = await actorOf(agent);
  const rowLock = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [actor.agentId]);
  const transactions = vi.spyOn(db, "$transaction");
  try {
    const verdict = recordToolCall(db, actor, call);
    await rowLock.untilWaiting(1);
    await rowLock.release();
    const answer = await verdict;
    expect(transactions).toHaveBeenCalledTimes(1);
    return answer;
  } finally {
    transactions.mockRestore();
    await rowLock.release();
  }
}

/** A call the common statement records, with no transaction. */
async function callByCommonPath(agent: TestAgent, call: ToolCall) {
  const actor = await actorOf(agent);
  const transactions = vi.spyOn(db, "$transaction");
  try {
    const answer = await recordToolCall(db, actor, call);
    expect(transactions).not.toHaveBeenCalled();
    return answer;
  } finally {
    transactions.mockRestore();
  }
}

describe("the common verdict", () => {
  it("writes the same attempt and event as the full path", async () => {
    const agent = await registerAgent();
    expect(await callByFullPath(agent, READ)).toEqual({ allowed: true });
    expect(await callByCommonPath(agent, READ)).toEqual({ allowed: true });
    const calls = await recordedCallsOf(agent);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toEqual(calls[0]);
    const events = await db.event.findMany({
      where: { subject: `agent:${agent.name}`, kind: "tool.allowed" },
      orderBy: { id: "asc" },
      select: { kind: true, subject: true, data: true },
    });
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual(events[0]);
  });

  it("writes the same approval, attempt and events as the full path for a call an allow rule lets through", async () => {
    const agent = await registerAgent();
    await db.agent.update({ where: { name: agent.name }, data: { gate: "approved" } });
    const ruleId = await createRule({
      pattern: "bash(git push origin main)",
      effect: "allow",
      scope: { kind: "agent", agent: agent.name },
    });
    const before = await db.event.aggregate({ _max: { id: true } });
    const verdicts = [await callByFullPath(agent, PUSH), await callByCommonPath(agent, PUSH)] as {
      requestId: string;
    }[];
    expect(verdicts[0]).toEqual({ allowed: true, requestId: expect.any(String), ruleId });
    expect(verdicts[1]).toEqual({ ...verdicts[0], requestId: expect.any(String) });
    const [first, second] = verdicts.map((verdict) => verdict.requestId);
    expect(second).not.toBe(first);

    const approvals = await db.request.findMany({
      where: { id: { in: [first as string, second as string] } },
      orderBy: { createdAt: "asc" },
    });
    expect(approvals).toHaveLength(2);
    const comparable = ({
      id: _id,
      createdAt,
      respondedAt,
      expiresAt,
      ...rest
    }: (typeof approvals)[number]) => {
      expect(respondedAt).toEqual(expiresAt);
      expect(createdAt.getTime()).toBeLessThanOrEqual((respondedAt as Date).getTime() + 1_000);
      return rest;
    };
    expect(comparable(approvals[1] as (typeof approvals)[number])).toEqual(
      comparable(approvals[0] as (typeof approvals)[number]),
    );
    const calls = await recordedCallsOf(agent);
    expect(calls.map((call) => call.requestId)).toEqual([first, second]);
    expect({ ...calls[1], requestId: null }).toEqual({ ...calls[0], requestId: null });

    const events = await db.event.findMany({
      where: { id: { gt: before._max.id ?? 0n } },
      orderBy: { id: "asc" },
      select: { kind: true, subject: true, data: true },
    });
    const forCall = (requestId: string) =>
      events
        .filter((event) => JSON.stringify(event).includes(requestId))
        .map((event) => JSON.parse(JSON.stringify(event).replaceAll(requestId, "<request>")));
    expect(forCall(first as string).map((event) => event.kind)).toEqual([
      "request.decided",
      "tool.allowed",
    ]);
    expect(forCall(second as string)).toEqual(forCall(first as string));
  });

  it("refuses a stale incarnation whose respawn commits while the verdict waits on the row lock", async () => {
    const agent = await registerAgent();
    await warm(agent);
    const actor = await actorOf(agent);
    const holder = new pg.Client({ connectionString: requireDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [actor.agentId]);
      const verdict = recordToolCall(db, actor, READ).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await holder.query("UPDATE agents SET incarnation = incarnation + 1 WHERE id = $1", [
        actor.agentId,
      ]);
      await holder.query("COMMIT");
      const outcome = await verdict;
      expect(outcome).toMatchObject({ error: { code: "STALE_INCARNATION" } });
    } finally {
      await holder.end();
    }
    expect(
      await db.toolCall.count({
        where: { agentId: actor.agentId, incarnation: actor.incarnation },
      }),
    ).toBe(2);
  });

  it("obeys a gate closed and a stop agreed behind its back", async () => {
    const agent = await registerAgent();
    await warm(agent, WRITE);
    await db.agent.update({ where: { name: agent.name }, data: { gate: "required" } });
    expect((await api.toolCall(agent.headers, WRITE)).json).toMatchObject({
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
    });
    await db.agent.update({ where: { name: agent.name }, data: { gate: "approved" } });
    await warm(agent, WRITE);
    await db.agent.update({ where: { name: agent.name }, data: { status: "stopping" } });
    expect((await api.toolCall(agent.headers, WRITE)).json).toMatchObject({
      allowed: false,
      code: "AGENT_STOPPING",
    });
  });

  it("lets an allow rule through only under the row as it is now: gate closed, role changed", async () => {
    const agent = await registerAgent();
    const role = `pusher-${agent.name}`;
    await db.agent.update({ where: { name: agent.name }, data: { gate: "approved", role } });
    await createRule({
      pattern: "bash(git push origin main)",
      effect: "allow",
      scope: { kind: "role", role },
    });
    await warm(agent, PUSH);
    await db.agent.update({ where: { name: agent.name }, data: { gate: "required" } });
    expect((await api.toolCall(agent.headers, PUSH)).json).toMatchObject({
      allowed: false,
      code: "PLAN_GATE_BLOCKED",
    });
    await db.agent.update({ where: { name: agent.name }, data: { gate: "approved" } });
    await warm(agent, PUSH);
    await db.agent.update({ where: { name: agent.name }, data: { role: "someone-else" } });
    expect((await api.toolCall(agent.headers, PUSH)).json).toMatchObject({
      allowed: false,
      code: "TOOL_APPROVAL_REQUIRED",
    });
  });

  /** Counts the node's transactions (the full path) and its reads of an agent's verdict facts. */
  function watchPaths() {
    const pool = poolOf(db);
    if (!pool) throw new Error("the tests' client has no pool of ours");
    const transactions = vi.spyOn(db, "$transaction");
    const queries = vi.spyOn(pool, "query");
    return {
      transactions: () => transactions.mock.calls.length,
      factReads: () =>
        queries.mock.calls.filter(
          ([config]) => (config as { name?: string }).name === "agent-verdict-facts",
        ).length,
      stop: () => {
        transactions.mockRestore();
        queries.mockRestore();
      },
    };
  }

  it("answers an agent's first call on this node by the common statement, after one read of its row", async () => {
    const agent = await registerAgent();
    const actor = await actorOf(agent);
    const paths = watchPaths();
    try {
      for (let call = 0; call < 3; call += 1) {
        expect(await recordToolCall(db, actor, READ)).toEqual({ allowed: true });
      }
      expect(paths.transactions()).toBe(0);
      expect(paths.factReads()).toBe(1);
    } finally {
      paths.stop();
    }
    expect(await recordedCallsOf(agent)).toHaveLength(3);
  });

  it("leaves a connected session's calls to the full path, reading its row once", async () => {
    const connectToken = await createToken("connect");
    const session = await api.connectSession(connectToken.headers, {
      sessionId: randomUUID(),
      cwd: "/home/ada/src/notes",
      model: "opus",
    });
    const name = String((session.json.agent as { name: string }).name);
    const actor = await actorOf({ name } as TestAgent);
    const paths = watchPaths();
    try {
      for (let call = 0; call < 3; call += 1) await recordToolCall(db, actor, READ);
      expect(paths.transactions()).toBe(3);
      expect(paths.factReads()).toBe(1);
    } finally {
      paths.stop();
    }
  });

  it("refuses an ended incarnation's call by the full path, without reading its agent's row again", async () => {
    const agent = await registerAgent();
    const ended = await actorOf(agent);
    await warm(agent);
    await db.agent.update({
      where: { name: agent.name },
      data: { incarnation: { increment: 1 } },
    });
    const current = { ...ended, incarnation: ended.incarnation + 1 };
    // The node learns the new incarnation from the current one's first call.
    expect(await recordToolCall(db, current, READ)).toEqual({ allowed: true });
    const paths = watchPaths();
    try {
      await expect(recordToolCall(db, ended, READ)).rejects.toMatchObject({
        code: "STALE_INCARNATION",
      });
      expect(paths.factReads()).toBe(0);
      expect(paths.transactions()).toBe(1);
    } finally {
      paths.stop();
    }
    expect(await db.toolCall.count({ where: { agentId: ended.agentId } })).toBe(3);
  });

  it("judges rules by the agent's role as it is now, not as it was remembered", async () => {
    const agent = await registerAgent();
    const role = `role-${agent.name}`;
    await createRule({
      pattern: "read_file",
      effect: "deny",
      scope: { kind: "role", role },
    });
    await warm(agent);
    await db.agent.update({ where: { name: agent.name }, data: { role } });
    expect((await api.toolCall(agent.headers, READ)).json).toMatchObject({
      allowed: false,
      code: "RULE_DENIED",
    });
  });

  it("leaves a call an enforced rule decides to the full path, and traces a shadow rule", async () => {
    const agent = await registerAgent();
    await warm(agent);
    const shadowId = await createRule({
      pattern: "read_file",
      effect: "deny",
      mode: "shadow",
      scope: { kind: "agent", agent: agent.name },
    });
    await api.toolCall(agent.headers, READ);
    const [shadowed] = await db.event.findMany({
      where: { subject: `agent:${agent.name}`, kind: "tool.allowed" },
      orderBy: { id: "desc" },
      take: 1,
    });
    expect(shadowed?.data).toMatchObject({ shadowRuleId: shadowId, shadowEffect: "deny" });
    await createRule({
      pattern: "read_file",
      effect: "deny",
      scope: { kind: "agent", agent: agent.name },
    });
    expect((await api.toolCall(agent.headers, READ)).json).toMatchObject({ code: "RULE_DENIED" });
  });
});

describe("verdicts committed in groups (decision 042)", () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  // Long enough for calls sent at once to reach the group behind the held commit, on a busy CI.
  const untilQueued = () => new Promise((resolve) => setTimeout(resolve, 1_000));

  /** The transaction that wrote each agent's last recorded call. */
  async function lastCallTransactions(agentIds: string[]): Promise<string[]> {
    const rows = await db.$queryRaw<{ agent_id: string; writer: string }[]>`
      SELECT DISTINCT ON (agent_id) agent_id::text, xmin::text AS writer FROM tool_calls
      WHERE agent_id = ANY(${agentIds}::uuid[]) ORDER BY agent_id, id DESC`;
    const writerOf = new Map(rows.map((row) => [row.agent_id, row.writer]));
    return agentIds.map((id) => writerOf.get(id) ?? "none");
  }

  /** Agents whose next call takes the one-statement path; with a rule for `call` if it needs one. */
  async function warmAgents(count: number, call: typeof READ | typeof WRITE | typeof PUSH) {
    const agents = await Promise.all(Array.from({ length: count }, () => registerAgent()));
    if (call === PUSH) {
      const role = `group-${agents[0]?.name}`;
      await db.agent.updateMany({
        where: { name: { in: agents.map((agent) => agent.name) } },
        data: { gate: "approved", role },
      });
      await createRule({
        pattern: "bash(git push origin main)",
        effect: "allow",
        scope: { kind: "role", role },
      });
    }
    for (const agent of agents) await warm(agent, call);
    return Promise.all(agents.map(actorOf));
  }

  it.each([
    ["allowed by the plan", READ],
    ["allowed by a rule", PUSH],
  ])(
    "commits the calls %s that came while a commit was under way together, in one transaction",
    async (_, call) => {
      const [first, ...waiting] = await warmAgents(5, call);
      if (!first) throw new Error("no agents");
      const lock = await holdLock("LOCK TABLE tool_calls IN SHARE MODE");
      const firstVerdict = recordToolCall(db, first, call);
      await settle();
      const waitingVerdicts = Promise.all(waiting.map((actor) => recordToolCall(db, actor, call)));
      await untilQueued();
      await lock.release();
      const verdicts = [await firstVerdict, ...(await waitingVerdicts)];
      for (const verdict of verdicts) expect(verdict).toMatchObject({ allowed: true });
      const [firstWriter, ...writers] = await lastCallTransactions(
        [first, ...waiting].map((actor) => actor.agentId),
      );
      expect(new Set(writers).size).toBe(1);
      expect(writers[0]).not.toBe(firstWriter);
      // A rule's approval is decided when its group commits, never before its row was created.
      const approvalIds = verdicts.flatMap((verdict) => verdict.requestId ?? []);
      expect(approvalIds).toHaveLength(call === PUSH ? verdicts.length : 0);
      for (const approval of await db.request.findMany({ where: { id: { in: approvalIds } } })) {
        expect(approval.respondedAt).toEqual(approval.createdAt);
        expect(approval.expiresAt).toEqual(approval.createdAt);
      }
    },
  );

  it("holds each call of a group to its own agent's row: respawned, gate closed, stopping", async () => {
    const [first, good, respawned] = await warmAgents(3, READ);
    const [closed, stopping] = await warmAgents(2, WRITE);
    if (!first || !good || !respawned || !closed || !stopping) throw new Error("no agents");
    // Behind the remembered facts' back, as a respawn, the Lead or a stop would.
    await db.agent.update({
      where: { id: respawned.agentId },
      data: { incarnation: { increment: 1 } },
    });
    await db.agent.update({ where: { id: closed.agentId }, data: { gate: "required" } });
    await db.agent.update({ where: { id: stopping.agentId }, data: { status: "stopping" } });
    const lock = await holdLock("LOCK TABLE tool_calls IN SHARE MODE");
    const firstVerdict = recordToolCall(db, first, READ);
    await settle();
    const settled = (verdict: Promise<unknown>) =>
      verdict.then(
        (value) => ({ value }),
        (error: { code?: string }) => ({ error: error.code }),
      );
    const verdicts = Promise.all([
      settled(recordToolCall(db, good, READ)),
      settled(recordToolCall(db, respawned, READ)),
      settled(recordToolCall(db, good, { tool: "read_file", args: { path: "second.txt" } })),
      settled(recordToolCall(db, closed, WRITE)),
      settled(recordToolCall(db, stopping, WRITE)),
    ]);
    await untilQueued();
    await lock.release();
    expect(await firstVerdict).toEqual({ allowed: true });
    const [goodFirst, stale, goodSecond, blocked, refused] = await verdicts;
    expect(goodFirst).toEqual({ value: { allowed: true } });
    expect(stale).toEqual({ error: "STALE_INCARNATION" });
    expect(goodSecond).toEqual({ value: { allowed: true } });
    expect(blocked).toMatchObject({ value: { allowed: false, code: "PLAN_GATE_BLOCKED" } });
    expect(refused).toMatchObject({ value: { allowed: false, code: "AGENT_STOPPING" } });
    // The good agent's two calls are all the group wrote (their order is the order they reached
    // the group, which their own awaits before it decide).
    const [goodWriter] = await lastCallTransactions([good.agentId]);
    const written = await db.$queryRaw<{ agent_id: string; path: string }[]>`
      SELECT agent_id::text, args->>'path' AS path FROM tool_calls
      WHERE xmin::text = ${goodWriter} ORDER BY path`;
    expect(written).toEqual([
      { agent_id: good.agentId, path: READ.args.path },
      { agent_id: good.agentId, path: "second.txt" },
    ]);
    for (const [actor, calls] of [
      [respawned, 2],
      [closed, 3],
      [stopping, 3],
    ] as const) {
      expect(await db.toolCall.count({ where: { agentId: actor.agentId } })).toBe(calls);
    }
  });

  it("does not let one agent's locked row hold up the others' verdicts in its group", async () => {
    const [first, locked, other] = await warmAgents(3, READ);
    if (!first || !locked || !other) throw new Error("no agents");
    const rowLock = await holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [
      locked.agentId,
    ]);
    try {
      const tableLock = await holdLock("LOCK TABLE tool_calls IN SHARE MODE");
      const firstVerdict = recordToolCall(db, first, READ);
      await settle();
      let isLockedAnswered = false;
      const lockedVerdict = recordToolCall(db, locked, READ).then((verdict) => {
        isLockedAnswered = true;
        return verdict;
      });
      const otherVerdict = recordToolCall(db, other, READ);
      await untilQueued();
      await tableLock.release();
      expect(await firstVerdict).toEqual({ allowed: true });
      // Answered while the locked agent's row is still held, which only its own verdict waits for.
      const timedOut = new Promise((resolve) => setTimeout(() => resolve("timed out"), 5_000));
      expect(await Promise.race([otherVerdict, timedOut])).toEqual({ allowed: true });
      await settle();
      expect(isLockedAnswered).toBe(false);
      await rowLock.release();
      expect(await lockedVerdict).toEqual({ allowed: true });
    } finally {
      await rowLock.release();
    }
    expect(await db.toolCall.count({ where: { agentId: locked.agentId } })).toBe(3);
  });
});

describe("what jsonb cannot hold", () => {
  it("refuses an unpaired surrogate with 400 at the door, on the first call and later ones", async () => {
    const agent = await registerAgent();
    for (const call of [
      { tool: "read_file", args: { path: "a\ud800b" } },
      { tool: "read_file", args: { ["\udc00"]: "x" } },
    ]) {
      await warm(agent);
      const refused = await api.toolCall(agent.headers, call);
      expect(refused.status).toBe(400);
      expect(refused.json.error?.code).toBe("INVALID_INPUT");
    }
    // A pair is a character like any other.
    expect(
      (await api.toolCall(agent.headers, { ...READ, args: { path: "\ud83d\ude00" } })).json,
    ).toMatchObject({ allowed: true });
  });
});

describe("the rule cache", () => {
  // Named apart: killing every node's eviction listener on the shared database turned other test
  // files' caches off under them.
  const OWN_LISTENER = `${EVICTIONS_APPLICATION_NAME}-${randomBytes(4).toString("hex")}`;
  const cache = getRuleCache();
  let listener: ActorEvictionListener | undefined;

  afterEach(async () => {
    await listener?.stop();
    listener = undefined;
    cache.disable();
  });

  async function listen(): Promise<void> {
    listener = await startActorEvictionListener({
      databaseUrl: requireDatabaseUrl(),
      cache: new ActorCache(),
      alsoCaches: [cache],
      probeIntervalMs: 50,
      applicationName: OWN_LISTENER,
    });
    expect(cache.isEnabled).toBe(true);
  }

  it("obeys a rule made on this node at once", async () => {
    // Switched on with no listener: only the rule write's own eviction can empty it.
    cache.enable();
    cache.markDelivered(Date.now(), 3_600_000);
    const agent = await registerAgent();
    await warm(agent);
    expect(cache.get("rules")).toBeDefined();
    await createRule({
      pattern: "read_file",
      effect: "deny",
      scope: { kind: "agent", agent: agent.name },
    });
    expect((await api.toolCall(agent.headers, READ)).json).toMatchObject({ code: "RULE_DENIED" });
  });

  it("obeys a rule written by another node (straight to the table) within a second", async () => {
    await listen();
    const agent = await registerAgent();
    await warm(agent);
    expect(cache.get("rules")).toBeDefined();
    await db.$executeRaw`INSERT INTO rules (pattern, effect, scope, created_by)
      VALUES ('read_file', 'deny', ${JSON.stringify({ kind: "agent", agent: agent.name })}::jsonb, 'another node')`;
    const started = Date.now();
    for (;;) {
      const sentAt = Date.now();
      const { json } = await api.toolCall(agent.headers, READ);
      if (json.code === "RULE_DENIED") {
        expect(sentAt - started).toBeLessThan(1_000);
        break;
      }
      expect(Date.now() - started).toBeLessThan(2_000);
    }
  });

  it("answers nothing while its listener is down, so a rule written meanwhile applies at once", async () => {
    await listen();
    const agent = await registerAgent();
    await warm(agent);
    const admin = new pg.Client({ connectionString: requireDatabaseUrl() });
    await admin.connect();
    try {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [OWN_LISTENER],
      );
      for (let attempt = 0; attempt < 100 && cache.isEnabled; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(cache.isEnabled).toBe(false);
      // Stop it reconnecting, so the write below is never notified to this process.
      await listener?.stop();
      listener = undefined;
      await admin.query(
        "INSERT INTO rules (pattern, effect, scope, created_by) VALUES ('read_file', 'deny', $1, 'while down')",
        [JSON.stringify({ kind: "agent", agent: agent.name })],
      );
    } finally {
      await admin.end();
    }
    expect(cache.get("rules")).toBeUndefined();
    expect((await api.toolCall(agent.headers, READ)).json).toMatchObject({ code: "RULE_DENIED" });
  });
});
