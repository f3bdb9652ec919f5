import { randomBytes } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentActor } from "../../lib/auth/actor";
import { registerAgent } from "../../lib/agents/mutations";
import { requireDatabaseUrl } from "../../lib/env";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { readInbox } from "../../lib/messages/data";
import { EventHub } from "../../lib/realtime/event-hub";
import { waitForRequest } from "../../lib/requests/data";
import { submitRequest } from "../../lib/requests/mutations";

// A long-poll whose client hung up answers nobody: it must not queue a read to build that answer.
// 1,000 long-polls dropped at once would otherwise be 1,000 queries, each holding its request's
// objects until the pool gets to it.
const statements: string[] = [];
const db = new PrismaClient({
  adapter: new PrismaPg({ connectionString: requireDatabaseUrl(), max: 2 }),
  log: [{ emit: "event", level: "query" }],
});
db.$on("query", (event) => statements.push(event.query));

let agent: AgentActor;
beforeAll(async () => {
  const name = `abort-${randomBytes(4).toString("hex")}`;
  const { agent: view } = await registerAgent(db, { name, role: "tester" });
  const row = await db.agent.findUniqueOrThrow({ where: { name } });
  agent = { kind: "agent", agentId: row.id, name: view.name, incarnation: view.incarnation };
});
afterAll(() => db.$disconnect());

/** The agent's inbox held for up to 30 s, until its client (`signal`) leaves. */
function waitOnInbox(hub: EventHub, signal: AbortSignal) {
  return readInbox(db, hub, agent, { after: 0, wait: 30, limit: 50 }, signal).read();
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("a long-poll whose client hung up", () => {
  it("inbox: ends at once, without reading again, and leaves no waiter", async () => {
    const hub = new EventHub();
    const controller = new AbortController();
    statements.length = 0;
    const poll = waitOnInbox(hub, controller.signal);
    await until(() => hub.waiterCount === 1 && statements.length === 1);
    controller.abort();
    const startedAt = performance.now();
    await expect(poll).resolves.toEqual({ messages: [], cursor: 0 });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(statements).toHaveLength(1);
    expect(hub.waiterCount).toBe(0);
  });

  it("request wait: ends at once, without reading again, and leaves no waiter", async () => {
    const hub = new EventHub();
    const { request } = await submitRequest(db, agent, {
      type: "plan_approval",
      payload: { plan: "wait on me" },
    });
    const controller = new AbortController();
    statements.length = 0;
    const poll = waitForRequest(db, hub, agent, request.id, { wait: 30 }, controller.signal).read();
    await until(() => hub.waiterCount === 1);
    // The wait is registered before its read: let that read finish first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const readsBeforeAbort = statements.length;
    controller.abort();
    await expect(poll).resolves.toMatchObject({ id: request.id, status: "pending" });
    expect(statements).toHaveLength(readsBeforeAbort);
    expect(hub.waiterCount).toBe(0);
  });

  it("still wakes on its event and reads again while the client is there", async () => {
    const hub = new EventHub();
    const controller = new AbortController();
    statements.length = 0;
    const poll = waitOnInbox(hub, controller.signal);
    await until(() => hub.waiterCount === 1 && statements.length === 1);
    // A hint with no message behind it: the long-poll reads, finds nothing, and waits again.
    hub.publish([
      { id: 1, kind: "message.sent", data: { to: agent.name }, createdAt: "" } as never,
    ]);
    await until(() => statements.length === 2 && hub.waiterCount === 1);
    controller.abort();
    await expect(poll).resolves.toEqual({ messages: [], cursor: 0 });
    expect(statements).toHaveLength(2);
    expect(hub.waiterCount).toBe(0);
  });
});
