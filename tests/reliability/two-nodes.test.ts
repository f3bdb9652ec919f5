import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import { startApiNode, type ApiNode } from "../support/api-node";
import {
  ApiError,
  ConsoleRecorder,
  createHuman,
  createOwnDatabase,
  eventCountsByRequest,
  InboxWaiter,
  LeadApi,
  newestEventId,
  percentile,
  registerApiAgent,
  signIn,
  sleep,
  waitUntil,
  writeFigures,
  type AgentHandle,
} from "../support/reliability";
import { createApiToken } from "../../lib/tokens/mutations";

// Two web nodes (separate OS processes, separate ports, each with its own bridge, sweeper and
// socket.io) on one database. Fan-out between them exists only through LISTEN/NOTIFY and the
// events table; every sweep is a compare-and-set.

let database: Awaited<ReturnType<typeof createOwnDatabase>>;
let db: PrismaClient;
let nodeA: ApiNode;
let nodeB: ApiNode;
let leadOnA: LeadApi;
let leadOnB: LeadApi;
let consoleOnA: ConsoleRecorder;
let consoleOnB: ConsoleRecorder;
const waiters: InboxWaiter[] = [];
const figures: Record<string, unknown> = {};
let clientServerErrors = 0;
let agentCount = 0;

function countServerError(error: unknown): never {
  if (error instanceof ApiError && error.status >= 500) clientServerErrors += 1;
  throw error;
}

async function newAgent(lead: LeadApi, node: ApiNode): Promise<AgentHandle> {
  agentCount += 1;
  return registerApiAgent(lead, node.url, `two-nodes-${agentCount}`).catch(countServerError);
}

beforeAll(async () => {
  database = await createOwnDatabase(inject("adminDatabaseUrl"), "handshake_two_nodes");
  db = database.db;
  const lead = await createHuman(db, "lead");
  const viewer = await createHuman(db, "viewer");
  const { token } = await createApiToken(db, lead.userId, { name: "two-nodes", scope: "admin" });
  [nodeA, nodeB] = await Promise.all([
    startApiNode({ databaseUrl: database.url, label: "A" }),
    startApiNode({ databaseUrl: database.url, label: "B" }),
  ]);
  leadOnA = new LeadApi(nodeA.url, token);
  leadOnB = new LeadApi(nodeB.url, token);
  // One session, used on both nodes: sessions live in the shared database.
  const session = await signIn(nodeA.url, viewer);
  const after = await newestEventId(db);
  consoleOnA = new ConsoleRecorder("A", nodeA.url, session, after);
  consoleOnB = new ConsoleRecorder("B", nodeB.url, session, after);
  await Promise.all([consoleOnA.ready(), consoleOnB.ready()]);
}, 60_000);

afterAll(async () => {
  consoleOnA?.close();
  consoleOnB?.close();
  await Promise.all(waiters.map((waiter) => waiter.stop()));
  const nodeErrors = (nodeA?.serverErrors() ?? 0) + (nodeB?.serverErrors() ?? 0);
  const serverErrorDetails = [nodeA, nodeB].flatMap((n) => n?.serverErrorDetails() ?? []);
  await Promise.all([nodeA?.stop(), nodeB?.stop()]);
  await database?.drop();
  await writeFigures("two-nodes", {
    title: "Two web nodes on one database",
    ...figures,
    serverErrors: clientServerErrors + nodeErrors,
    serverErrorDetails,
  });
}, 30_000);

describe("two web nodes on one database", () => {
  it("a request submitted through node A appears on a console connected to node B", async () => {
    const agents = await Promise.all([1, 2, 3, 4, 5].map(() => newAgent(leadOnA, nodeA)));
    const submitted = await Promise.all(
      agents.map(async (agent) => {
        const request = await agent.client
          .submitRequest({
            type: "plan_approval",
            payload: { plan: `plan of ${agent.name}` },
            idempotencyKey: `plan-${agent.name}`,
          })
          .catch(countServerError);
        return { id: request.id, committedAt: Date.now() };
      }),
    );
    await waitUntil("every request.created on node B's console", () =>
      submitted.every(({ id }) => consoleOnB.arrivalOf("request.created", id) !== undefined),
    );
    const latencies = submitted.map(({ id, committedAt }) =>
      Math.max(0, (consoleOnB.arrivalOf("request.created", id) ?? 0) - committedAt),
    );
    // And on A's own console, once each.
    await waitUntil("every request.created on node A's console", () =>
      submitted.every(({ id }) => consoleOnA.arrivalOf("request.created", id) !== undefined),
    );
    for (const { id } of submitted) {
      expect(consoleOnB.countOf("request.created", id)).toBe(1);
      expect(consoleOnA.countOf("request.created", id)).toBe(1);
    }
    figures.crossNodeConsole = {
      requests: submitted.length,
      lost: 0,
      p50Ms: percentile(latencies, 50),
      maxMs: Math.max(...latencies),
    };
    expect(Math.max(...latencies)).toBeLessThan(10_000);
  });

  it("a decision made on node B releases an agent long-polling on node A", async () => {
    const agents = await Promise.all([1, 2, 3, 4, 5, 6].map(() => newAgent(leadOnA, nodeA)));
    const requests = await Promise.all(
      agents.map((agent) =>
        agent.client
          .submitRequest({ type: "plan_approval", payload: { plan: "ship it" } })
          .catch(countServerError),
      ),
    );
    // Each agent now waits on node A (its plan produced nothing in its own inbox).
    const agentWaiters = agents.map((agent) => new InboxWaiter(agent, 0).start());
    waiters.push(...agentWaiters);
    await sleep(500);
    expect(agentWaiters.every((waiter) => waiter.arrivals.size === 0)).toBe(true);

    const decidedAt = new Map<string, number>();
    await Promise.all(
      requests.map(async (request, index) => {
        const approve = index % 2 === 0;
        const decided = await leadOnB
          .respond(request.id, {
            type: "plan_approval_response",
            approve,
            ...(approve ? {} : { feedback: "split it in two" }),
          })
          .catch(countServerError);
        expect(decided.status).toBe(approve ? "approved" : "rejected");
        decidedAt.set(request.id, Date.now());
      }),
    );
    await waitUntil("every waiting agent on A to receive its decision", () =>
      requests.every(
        (request, index) =>
          agentWaiters[index]?.arrivalOf("plan_approval_response", request.id) !== undefined,
      ),
    );
    const latencies = requests.map((request, index) =>
      Math.max(
        0,
        (agentWaiters[index]?.arrivalOf("plan_approval_response", request.id) ?? 0) -
          (decidedAt.get(request.id) ?? 0),
      ),
    );
    for (const [index, request] of requests.entries()) {
      const waiter = agentWaiters[index];
      expect(waiter?.countOf("plan_approval_response", request.id)).toBe(1);
      expect(waiter?.errors).toEqual([]);
      const received = [...(waiter?.arrivals.values() ?? [])].map(({ message }) => message);
      expect(received).toEqual([
        expect.objectContaining({
          type: "plan_approval_response",
          metadata: expect.objectContaining({ requestId: request.id, approve: index % 2 === 0 }),
        }),
      ]);
    }
    // Both consoles saw each decision once.
    await waitUntil("request.decided on both consoles", () =>
      requests.every(
        ({ id }) =>
          consoleOnA.arrivalOf("request.decided", id) !== undefined &&
          consoleOnB.arrivalOf("request.decided", id) !== undefined,
      ),
    );
    const decidedEvents = await eventCountsByRequest(db, "request.decided");
    for (const { id } of requests) expect(decidedEvents.get(id)).toBe(1);
    figures.crossNodeWake = {
      requests: requests.length,
      lost: 0,
      duplicates: 0,
      p50Ms: percentile(latencies, 50),
      maxMs: Math.max(...latencies),
    };
    expect(Math.max(...latencies)).toBeLessThan(10_000);
  });

  it("the sweepers on both nodes expire each request exactly once", async () => {
    // One request per agent, so no expiry's effects (a forced stop) touch another request.
    const perType = 15;
    const planAgents = await Promise.all(
      Array.from({ length: perType }, (_, i) => newAgent(i % 2 ? leadOnA : leadOnB, nodeA)),
    );
    const stopAgents = await Promise.all(
      Array.from({ length: perType }, () => newAgent(leadOnA, nodeB)),
    );
    const forcedAgents = await Promise.all(
      Array.from({ length: perType }, () => newAgent(leadOnB, nodeB)),
    );
    const timeoutSeconds = 5;
    const ids = await Promise.all([
      ...planAgents.map(async (agent) => {
        const request = await agent.client.submitRequest({
          type: "plan_approval",
          payload: { plan: "wait for me" },
          timeoutSeconds,
        });
        return request.id;
      }),
      ...stopAgents.map(async (agent) => {
        const request = await agent.client.submitRequest({
          type: "shutdown",
          payload: { reason: "done" },
          timeoutSeconds,
        });
        return request.id;
      }),
      ...forcedAgents.map(async (agent, i) => {
        const lead = i % 2 ? leadOnA : leadOnB;
        return (await lead.requestShutdown(agent.name, { timeoutSeconds })).id;
      }),
    ]).catch(countServerError);
    const startedAt = Date.now();

    await waitUntil(
      "every short-timeout request to expire",
      async () => (await db.request.count({ where: { id: { in: ids }, status: "pending" } })) === 0,
      30_000,
      200,
    );
    const expiredAfterMs = Date.now() - startedAt;
    // Give both sweepers a few more ticks in which a double expiry would show.
    await sleep(2_000);

    const rows = await db.request.findMany({ where: { id: { in: ids } } });
    expect(rows.map((row) => row.status)).toEqual(ids.map(() => "expired"));
    const expiredEvents = await eventCountsByRequest(db, "request.expired");
    const counts = ids.map((id) => expiredEvents.get(id) ?? 0);
    const responses = await db.$queryRaw<{ requestId: string; count: bigint }[]>`
      SELECT metadata->>'requestId' AS "requestId", count(*) AS count FROM messages
      WHERE type LIKE '%\_response' AND metadata->>'requestId' = ANY(${ids}) GROUP BY 1`;
    const responseCounts = new Map(responses.map((row) => [row.requestId, Number(row.count)]));
    await waitUntil("request.expired on both consoles", () =>
      ids.every(
        (id) =>
          consoleOnA.arrivalOf("request.expired", id) !== undefined &&
          consoleOnB.arrivalOf("request.expired", id) !== undefined,
      ),
    );
    figures.sweepers = {
      requests: ids.length,
      expired: rows.filter((row) => row.status === "expired").length,
      expiredEventsPerRequest: { min: Math.min(...counts), max: Math.max(...counts) },
      duplicates: counts.filter((count) => count > 1).length,
      lost: counts.filter((count) => count === 0).length,
      allExpiredAfterMs: expiredAfterMs,
    };
    expect(counts).toEqual(ids.map(() => 1));
    expect(ids.map((id) => responseCounts.get(id) ?? 0)).toEqual(ids.map(() => 1));
    for (const id of ids) {
      expect(consoleOnA.countOf("request.expired", id)).toBe(1);
      expect(consoleOnB.countOf("request.expired", id)).toBe(1);
    }
    // The forced stops took effect once: each of those agents ended exactly once.
    const stopped = await db.event.count({
      where: { kind: "agent.stopped", subject: { in: forcedAgents.map((a) => `agent:${a.name}`) } },
    });
    expect(stopped).toBe(forcedAgents.length);
  }, 45_000);

  it("both nodes are still healthy and answered no request with a 5xx", async () => {
    for (const node of [nodeA, nodeB]) {
      const health = await fetch(`${node.url}/api/v1/health`);
      expect(health.status).toBe(200);
      expect(node.isRunning()).toBe(true);
    }
    expect(clientServerErrors).toBe(0);
    expect(nodeA.serverErrors() + nodeB.serverErrors()).toBe(0);
    const sections = ["crossNodeConsole", "crossNodeWake", "sweepers"] as const;
    figures.cases = sections.reduce(
      (sum, key) =>
        sum + Number((figures[key] as { requests?: number } | undefined)?.requests ?? 0),
      0,
    );
    figures.lost = sections.reduce(
      (sum, key) => sum + Number((figures[key] as { lost?: number } | undefined)?.lost ?? 0),
      0,
    );
    figures.duplicates = sections.reduce(
      (sum, key) =>
        sum + Number((figures[key] as { duplicates?: number } | undefined)?.duplicates ?? 0),
      0,
    );
  });
});
