import { afterAll, describe, expect, it } from "vitest";
import { createDb, getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { expireDueRequests } from "../../lib/requests/mutations";
import { signedInHuman } from "../route-client";
import { api, expireOwnAt, lead, registerAgent, submitPlan } from "./fixtures";

// A second client stands in for a second server process: its own pool, its own connections.
const otherNode = createDb(requireDatabaseUrl());

afterAll(async () => {
  await otherNode.$disconnect();
  await getDb().$disconnect();
});

describe("concurrent decisions and expiries", () => {
  it("50 concurrent decisions on one request from two Leads: exactly one wins, the rest get 409 with the winner", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = String((await submitPlan(agent)).json.id);
    const leads = [await lead(), await signedInHuman("lead")];
    const attempts = Array.from({ length: 50 }, (_, i) => {
      const who = leads[i % 2];
      if (!who) throw new Error("missing lead");
      return api.respond(who.headers, plan, {
        type: "plan_approval_response",
        approve: i % 3 !== 0,
        feedback: `decision ${i}`,
      });
    });
    const results = await Promise.all(attempts);
    const winners = results.filter((result) => result.status === 200);
    const losers = results.filter((result) => result.status === 409);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(49);
    const winner = winners[0]?.json;
    for (const loser of losers) {
      expect(loser.json.error).toMatchObject({
        code: "ALREADY_DECIDED",
        request: {
          id: plan,
          status: winner?.status,
          feedback: winner?.feedback,
          respondedBy: winner?.respondedBy,
        },
      });
    }
    const db = getDb();
    expect(
      await db.event.count({ where: { kind: "request.decided", subject: `request:${plan}` } }),
    ).toBe(1);
    expect(
      await db.message.count({
        where: { type: "plan_approval_response", metadata: { path: ["requestId"], equals: plan } },
      }),
    ).toBe(1);
  });

  it("timeouts: a plan and a shutdown past their deadline are expired once by two concurrent sweepers, policies applied once", async () => {
    const db = getDb();
    const planner = await registerAgent({ requirePlan: true });
    const plan = String(
      (
        await api.submitRequest(planner.headers, {
          type: "plan_approval",
          payload: { plan: "p" },
          timeoutSeconds: 5,
        })
      ).json.id,
    );
    const stopper = await registerAgent();
    const shutdown = String(
      (await api.requestShutdown((await lead()).headers, stopper.name, { timeoutSeconds: 5 })).json
        .id,
    );
    const asker = await registerAgent();
    const askToStop = String(
      (
        await api.submitRequest(asker.headers, {
          type: "shutdown",
          payload: { reason: "done" },
          timeoutSeconds: 5,
        })
      ).json.id,
    );

    // Each node sweeps these three at once, as every node's sweeper would (only these: a sweep
    // ahead of the clock would expire other files' requests too).
    const later = new Date(Date.now() + 6_000);
    const ours = [plan, shutdown, askToStop];
    const swept = await Promise.all(
      ours.flatMap((id) => [expireOwnAt(id, later, db), expireOwnAt(id, later, otherNode)]),
    );
    const expiredIds = swept.flatMap((view) => (view ? [view.id] : []));
    expect(expiredIds.sort()).toEqual([...ours].sort());

    for (const id of [plan, shutdown, askToStop]) {
      expect(
        await db.event.count({ where: { kind: "request.expired", subject: `request:${id}` } }),
      ).toBe(1);
      expect(await db.request.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: "expired",
      });
    }
    // plan → rejected gate with "timed out" feedback to the agent
    expect((await api.me(planner.headers)).json).toMatchObject({ gate: "rejected" });
    const planResponse = await db.message.findMany({
      where: { type: "plan_approval_response", metadata: { path: ["requestId"], equals: plan } },
    });
    expect(planResponse).toHaveLength(1);
    expect(planResponse[0]).toMatchObject({
      content: expect.stringMatching(/timed out/),
      metadata: { approve: false, status: "expired" },
    });
    // Lead → agent shutdown unanswered → forced stop, exactly once
    const stopped = await db.agent.findUniqueOrThrow({ where: { name: stopper.name } });
    expect(stopped).toMatchObject({ status: "shutdown", isForcedStop: true });
    expect(
      await db.event.count({ where: { kind: "agent.stopped", subject: `agent:${stopper.name}` } }),
    ).toBe(1);
    // Agent → Lead "may I stop?" unanswered → approved: the agent is told yes and stops
    expect((await api.me(asker.headers)).json).toMatchObject({ status: "stopping" });
    const yes = await db.message.findFirstOrThrow({
      where: { type: "shutdown_response", metadata: { path: ["requestId"], equals: askToStop } },
    });
    expect(yes.metadata).toMatchObject({ approve: true });
    // Nothing is expired twice on a later sweep.
    expect(await Promise.all(ours.map((id) => expireOwnAt(id, later, db)))).toEqual([
      null,
      null,
      null,
    ]);
  });

  it("requests not yet due are left alone", async () => {
    const agent = await registerAgent();
    const plan = String((await submitPlan(agent)).json.id);
    await expireDueRequests(getDb());
    expect((await getDb().request.findUniqueOrThrow({ where: { id: plan } })).status).toBe(
      "pending",
    );
  });
});
