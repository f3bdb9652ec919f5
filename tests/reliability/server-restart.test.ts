import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import type { RequestView } from "../../lib/requests/views";
import { createApiToken } from "../../lib/tokens/mutations";
import { startApiNode, type ApiNode } from "../support/api-node";
import {
  ApiError,
  ConsoleRecorder,
  createHuman,
  createOwnDatabase,
  eventCountsByRequest,
  InboxWaiter,
  LeadApi,
  registerApiAgent,
  signIn,
  sleep,
  waitUntil,
  writeFigures,
  type AgentHandle,
} from "../support/reliability";

// kill -9 of the only web node while requests are pending, agents are long-polling, a decision is
// in flight and more submissions arrive during the outage; then the node is started again on the
// same port. The agents' client retries network errors, so they simply resume waiting.

let database: Awaited<ReturnType<typeof createOwnDatabase>>;
let db: PrismaClient;
let node: ApiNode;
let lead: LeadApi;
let recorder: ConsoleRecorder;
const waiters: InboxWaiter[] = [];
const figures: Record<string, unknown> = {};
let clientServerErrors = 0;
let nodeServerErrors = 0;
const serverErrorDetails: string[] = [];

beforeAll(async () => {
  database = await createOwnDatabase(inject("adminDatabaseUrl"), "handshake_server_restart");
  db = database.db;
  const leadUser = await createHuman(db, "lead");
  const viewer = await createHuman(db, "viewer");
  const { token } = await createApiToken(db, leadUser.userId, {
    name: "server-restart",
    scope: "admin",
  });
  node = await startApiNode({ databaseUrl: database.url, label: "restart" });
  lead = new LeadApi(node.url, token);
  recorder = new ConsoleRecorder("console", node.url, await signIn(node.url, viewer), 0);
  await recorder.ready();
}, 60_000);

afterAll(async () => {
  recorder?.close();
  await Promise.all(waiters.map((waiter) => waiter.stop()));
  nodeServerErrors += node?.serverErrors() ?? 0;
  serverErrorDetails.push(...(node?.serverErrorDetails() ?? []));
  await node?.stop();
  await database?.drop();
  await writeFigures("server-restart", {
    title: "Web node killed (kill -9) and restarted",
    ...figures,
    serverErrors: clientServerErrors + nodeServerErrors,
    serverErrorDetails,
  });
}, 30_000);

function countServerError(error: unknown): never {
  if (error instanceof ApiError && error.status >= 500) clientServerErrors += 1;
  throw error;
}

/** A decision whose first attempt may have committed before the connection died. */
async function decide(request: RequestView, approve: boolean): Promise<"decided" | "already"> {
  try {
    await lead.respond(request.id, {
      type: "plan_approval_response",
      approve,
      ...(approve ? {} : { feedback: "not this one" }),
    });
    return "decided";
  } catch (error) {
    if (error instanceof ApiError && error.code === "ALREADY_DECIDED") return "already";
    return countServerError(error);
  }
}

describe("kill -9 of the web node and a restart", () => {
  it("loses nothing; agents resume waiting; decisions after the restart land exactly once", async () => {
    const agents: AgentHandle[] = await Promise.all(
      Array.from({ length: 6 }, (_, i) => registerApiAgent(lead, node.url, `restart-${i}`)),
    );
    const lateAgents: AgentHandle[] = await Promise.all(
      Array.from({ length: 3 }, (_, i) => registerApiAgent(lead, node.url, `restart-late-${i}`)),
    );
    const pending = await Promise.all(
      agents.map((agent) =>
        agent.client.submitRequest({
          type: "plan_approval",
          payload: { plan: `${agent.name}: before the crash` },
          idempotencyKey: `${agent.name}-1`,
        }),
      ),
    );
    for (const agent of [...agents, ...lateAgents]) {
      waiters.push(new InboxWaiter(agent, 0).start());
    }
    const waiterOf = (name: string) => waiters.find((waiter) => waiter.agent.name === name);
    await sleep(500);
    const firstPid = node.pid;

    // A decision in flight at the moment of the crash: it may or may not have committed.
    const inFlight = decide(pending[0] as RequestView, true);
    await node.crash();
    expect((await node.exited).signal).toBe("SIGKILL");
    nodeServerErrors += node.serverErrors();
    serverErrorDetails.push(...node.serverErrorDetails());
    const downAt = Date.now();

    // During the outage: more submissions (retried by the client until the node is back) and a
    // decision sent while nothing listens.
    const lateSubmissions = lateAgents.map((agent) =>
      agent.client.submitRequest({
        type: "plan_approval",
        payload: { plan: `${agent.name}: during the outage` },
        idempotencyKey: `${agent.name}-1`,
      }),
    );
    const duringOutage = decide(pending[1] as RequestView, false);
    await sleep(1_000);

    node = await startApiNode({ databaseUrl: database.url, label: "restart", port: node.port });
    const upAt = Date.now();
    expect(node.pid).not.toBe(firstPid);

    const inFlightOutcome = await inFlight;
    const outageOutcome = await duringOutage;
    const late = await Promise.all(lateSubmissions);

    // Nothing lost: the untouched requests are still pending, under the same ids.
    const stillPending = pending.slice(2);
    const rows = await db.request.findMany({
      where: { id: { in: stillPending.map((r) => r.id) } },
    });
    expect(rows.map((row) => row.status)).toEqual(stillPending.map(() => "pending"));
    // The late submissions exist once each, although the client sent them more than once.
    for (const [index, agent] of lateAgents.entries()) {
      const mine = await db.request.findMany({ where: { agent: { name: agent.name } } });
      expect(mine.map((row) => row.id)).toEqual([late[index]?.id]);
    }

    // The agents are waiting again (their long-polls were retried); none has an answer yet except
    // the two decided around the crash.
    await sleep(500);
    for (const waiter of waiters) expect(waiter.errors).toEqual([]);
    for (const request of stillPending) {
      expect(waiterOf(request.agent)?.arrivals.size).toBe(0);
    }

    // Decisions after the restart: each lands once; a repeated one is refused as already decided.
    const afterRestart = [...stillPending, ...late];
    const decidedAt = new Map<string, number>();
    await Promise.all(
      afterRestart.map(async (request, index) => {
        expect(await decide(request, index % 3 !== 0)).toBe("decided");
        decidedAt.set(request.id, Date.now());
        expect(await decide(request, true)).toBe("already");
      }),
    );
    const everything = [...pending, ...late];
    await waitUntil(
      "every agent to receive its decision",
      () =>
        everything.every(
          (request) =>
            waiterOf(request.agent)?.arrivalOf("plan_approval_response", request.id) !== undefined,
        ),
      20_000,
    );
    const wakeLatencies = afterRestart.map(
      (request) =>
        (waiterOf(request.agent)?.arrivalOf("plan_approval_response", request.id) ?? Infinity) -
        (decidedAt.get(request.id) ?? 0),
    );
    // The console reconnected by itself and, resuming from its last id, missed nothing.
    await waitUntil("the console to see every decision", () =>
      everything.every((request) => recorder.arrivalOf("request.decided", request.id)),
    );
    await sleep(300);

    const decidedEvents = await eventCountsByRequest(db, "request.decided");
    const createdEvents = await eventCountsByRequest(db, "request.created");
    const responses = await db.message.findMany({ where: { type: "plan_approval_response" } });
    const responsesPer = (id: string) =>
      responses.filter((message) => (message.metadata as { requestId?: string }).requestId === id)
        .length;
    const duplicateDecisions = everything.filter((r) => (decidedEvents.get(r.id) ?? 0) !== 1);
    const duplicateResponses = everything.filter((r) => responsesPer(r.id) !== 1);
    const duplicateRequests = everything.filter((r) => (createdEvents.get(r.id) ?? 0) !== 1);
    const agentDeliveries = everything.map(
      (request) => waiterOf(request.agent)?.countOf("plan_approval_response", request.id) ?? 0,
    );
    const consoleCounts = everything.flatMap((request) => [
      recorder.countOf("request.created", request.id),
      recorder.countOf("request.decided", request.id),
    ]);

    Object.assign(figures, {
      cases: everything.length,
      requests: everything.length,
      pendingAtCrash: pending.length,
      submittedDuringOutage: late.length,
      inFlightDecision: inFlightOutcome,
      decisionSentDuringOutage: outageOutcome,
      outageMs: upAt - downAt,
      lost:
        agentDeliveries.filter((count) => count === 0).length +
        consoleCounts.filter((count) => count === 0).length,
      duplicates:
        duplicateDecisions.length +
        duplicateResponses.length +
        duplicateRequests.length +
        agentDeliveries.filter((count) => count > 1).length,
      consoleReconnects: recorder.reconnects,
      wakeAfterRestartMaxMs: Math.round(Math.max(...wakeLatencies)),
      agentErrors: waiters.reduce((sum, waiter) => sum + waiter.errors.length, 0),
    });

    expect(duplicateDecisions.map((r) => r.id)).toEqual([]);
    expect(duplicateResponses.map((r) => r.id)).toEqual([]);
    expect(duplicateRequests.map((r) => r.id)).toEqual([]);
    expect(agentDeliveries).toEqual(everything.map(() => 1));
    expect(consoleCounts).toEqual(consoleCounts.map(() => 1));
    expect(recorder.reconnects).toBeGreaterThanOrEqual(1);
    expect((await db.request.findUniqueOrThrow({ where: { id: pending[0]?.id } })).status).toBe(
      "approved",
    );
    expect((await db.request.findUniqueOrThrow({ where: { id: pending[1]?.id } })).status).toBe(
      "rejected",
    );
    expect(clientServerErrors).toBe(0);
    expect(node.serverErrors()).toBe(0);
  }, 60_000);
});
