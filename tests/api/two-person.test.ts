import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createDb, getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { getProtocolType } from "../../lib/protocol/registry";
import { createRequestInTransaction, decideRequest } from "../../lib/requests/mutations";
import { inTransaction } from "../../lib/transaction";
import { callRoute, signedInHuman } from "../route-client";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { user as userRoute } from "../../lib/api/v1/users";
import { api, createToken, lead, registerAgent, type TestAgent } from "./fixtures";

// A second client stands in for a second server process: its own pool, its own connections.
const otherNode = createDb(requireDatabaseUrl());

afterAll(async () => {
  await otherNode.$disconnect();
  await getDb().$disconnect();
});

const approve = { type: "plan_approval_response", approve: true };
const reject = { type: "plan_approval_response", approve: false, feedback: "not today" };

async function userIdOf(email: string): Promise<string> {
  return (await getDb().user.findUniqueOrThrow({ where: { email } })).id;
}

/** A plan that needs two Leads, made the way the rules work makes one: through the one creator. */
async function createRequest(
  agent: TestAgent,
  options: { type?: "plan_approval" | "question"; timeoutSeconds?: number } = {},
) {
  const type = options.type ?? "plan_approval";
  const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
  const { request } = await inTransaction(getDb(), (tx) =>
    createRequestInTransaction(tx, {
      definition: getProtocolType(type),
      direction: "agent_to_lead",
      agentId: row.id,
      payload:
        type === "plan_approval"
          ? { plan: "1. drop the staging database\n2. restore it from last night" }
          : { question: "Which region?", options: [{ id: "eu", label: "Europe" }] },
      requiredApprovals: 2,
      senderIncarnation: row.incarnation,
      timeoutSeconds: options.timeoutSeconds,
    }),
  );
  // Account ages are compared to the millisecond: a Lead made after this is strictly newer.
  await sleep(5);
  return request;
}

/** Two Leads whose accounts exist before the request, and an agent that needs a plan. */
async function setUp() {
  const first = await signedInHuman("lead");
  const second = await signedInHuman("lead");
  await sleep(5);
  const agent = await registerAgent({ requirePlan: true });
  const request = await createRequest(agent);
  return { first, second, agent, id: request.id };
}

async function eventsOf(id: string, kind: string) {
  return getDb().event.findMany({ where: { kind, subject: `request:${id}` } });
}

async function approvalCount(id: string): Promise<number> {
  return getDb().requestApproval.count({ where: { requestId: id } });
}

describe("the two-person rule", () => {
  it("a first approval is recorded and the request stays pending; the agent hears nothing", async () => {
    const { first, agent, id } = await setUp();
    const before = await api.inbox(agent.headers);

    const partial = await api.respond(first.headers, id, approve);
    expect(partial.status).toBe(200);
    expect(partial.json).toMatchObject({
      status: "pending",
      decidedBy: null,
      respondedBy: null,
      requiredApprovals: 2,
      approvals: [
        { userId: await userIdOf(first.email), email: first.email, at: expect.any(String) },
      ],
    });
    const [recorded] = await eventsOf(id, "request.approval_recorded");
    expect(recorded?.data).toMatchObject({
      requestId: id,
      approvedBy: first.email,
      approvals: 1,
      requiredApprovals: 2,
    });
    expect(await eventsOf(id, "request.decided")).toHaveLength(0);

    // The agent's view: still pending, nothing new in its inbox, its wait not woken as decided.
    const waited = await api.getRequest(agent.headers, id, "?wait=1");
    expect(waited.json).toMatchObject({ status: "pending" });
    expect((await api.inbox(agent.headers)).json.messages).toEqual(before.json.messages);
    expect((await api.me(agent.headers)).json.gate).toBe("pending");

    // The Lead's list shows "1 of 2".
    const listed = await api.listRequests(first.headers, `?status=pending&agent=${agent.name}`);
    expect(listed.json.items).toEqual([
      expect.objectContaining({ id, requiredApprovals: 2, approvals: [expect.anything()] }),
    ]);
  });

  it("a second, different Lead decides it: approved, with both Leads as its provenance", async () => {
    const { first, second, agent, id } = await setUp();
    const token = await createToken("decide", second);
    await api.respond(first.headers, id, approve);

    const decided = await api.respond(token.headers, id, approve);
    expect(decided.status).toBe(200);
    const firstId = await userIdOf(first.email);
    const secondId = await userIdOf(second.email);
    const leads = {
      kind: "leads",
      approvals: [
        { kind: "human", userId: firstId, sessionId: expect.any(String) },
        { kind: "token", userId: secondId, tokenId: token.id, tokenName: token.name },
      ],
    };
    expect(decided.json).toMatchObject({ status: "approved", decidedBy: leads });
    expect((decided.json.approvals as { email: string }[]).map((a) => a.email)).toEqual([
      first.email,
      second.email,
    ]);
    expect((await api.getRequest(first.headers, id)).json).toMatchObject({
      decidedBy: leads,
      approvals: [{ userId: firstId }, { userId: secondId }],
    });
    const [event] = await eventsOf(id, "request.decided");
    expect((event?.data as { decidedBy: unknown }).decidedBy).toMatchObject(leads);
    expect((await api.me(agent.headers)).json.gate).toBe("approved");
  });

  it("the same Lead twice, by session or by its own token, is refused with 409 and changes nothing", async () => {
    const { first, id } = await setUp();
    const ownToken = await createToken("decide", first);
    await api.respond(first.headers, id, approve);

    for (const headers of [first.headers, ownToken.headers]) {
      const again = await api.respond(headers, id, approve);
      expect(again.status).toBe(409);
      expect(again.json.error).toMatchObject({
        code: "SECOND_LEAD_REQUIRED",
        request: { id, status: "pending", approvals: [{ email: first.email }] },
      });
    }
    expect(await approvalCount(id)).toBe(1);
    expect(await eventsOf(id, "request.approval_recorded")).toHaveLength(1);
    expect((await api.getRequest(first.headers, id)).json.status).toBe("pending");
  });

  it("a rejection by either Lead ends it, recorded as that Lead's", async () => {
    for (const rejecter of ["first", "second"] as const) {
      const { first, second, id } = await setUp();
      await api.respond(first.headers, id, approve);
      const by = rejecter === "first" ? first : second;
      const rejected = await api.respond(by.headers, id, reject);
      expect(rejected.status).toBe(200);
      expect(rejected.json).toMatchObject({
        status: "rejected",
        feedback: "not today",
        respondedBy: by.email,
        decidedBy: { kind: "human", userId: await userIdOf(by.email) },
      });
      // The approval before the rejection stays on the record, in the answer and on reading.
      const approvedBy = [{ email: first.email }];
      expect(rejected.json.approvals).toMatchObject(approvedBy);
      expect((await api.getRequest(by.headers, id)).json.approvals).toMatchObject(approvedBy);
    }
  });

  it("a Lead whose account is newer than the request may not approve it (403), only reject", async () => {
    const { first, id } = await setUp();
    const newcomer = await signedInHuman("lead");
    const refused = await api.respond(newcomer.headers, id, approve);
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe("LEAD_ACCOUNT_TOO_NEW");
    expect(await approvalCount(id)).toBe(0);

    await api.respond(first.headers, id, approve);
    const second = await api.respond(newcomer.headers, id, approve);
    expect(second.json.error?.code).toBe("LEAD_ACCOUNT_TOO_NEW");
    expect((await api.getRequest(first.headers, id)).json.status).toBe("pending");

    const rejected = await api.respond(newcomer.headers, id, reject);
    expect(rejected.json.status).toBe("rejected");
  });

  it("an account promoted to Lead after the request may not approve it either", async () => {
    const viewer = await signedInHuman("viewer");
    const { first, id } = await setUp();
    const viewerId = await userIdOf(viewer.email);
    const promoted = await callRoute(userRoute.PATCH, {
      method: "PATCH",
      path: `/api/v1/users/${viewerId}`,
      params: { id: viewerId },
      body: { role: "lead" },
      headers: (await lead()).headers,
    });
    expect(promoted.status).toBe(200);
    await api.respond(first.headers, id, approve);
    const refused = await api.respond(viewer.headers, id, approve);
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({
      code: "LEAD_ACCOUNT_TOO_NEW",
      message: expect.stringMatching(/role or standing changed/),
    });
    expect(await approvalCount(id)).toBe(1);
  });

  it("two Leads approving at once: both approvals count, exactly one decision", async () => {
    for (let round = 0; round < 5; round += 1) {
      const { first, second, id } = await setUp();
      const results = await Promise.all([
        api.respond(first.headers, id, approve),
        api.respond(second.headers, id, approve),
      ]);
      expect(results.map((result) => result.status)).toEqual([200, 200]);
      expect(results.map((result) => result.json.status).sort()).toEqual(["approved", "pending"]);
      expect(await eventsOf(id, "request.decided")).toHaveLength(1);
      expect(await approvalCount(id)).toBe(2);
    }
  });

  it("a third Lead racing the second: one decides, the other gets ALREADY_DECIDED; a replay changes nothing", async () => {
    const [first, second, third] = await Promise.all([1, 2, 3].map(() => signedInHuman("lead")));
    if (!first || !second || !third) throw new Error("missing lead");
    await sleep(5);
    const agent = await registerAgent({ requirePlan: true });
    const request = await createRequest(agent);
    await api.respond(first.headers, request.id, approve);
    const secondUser = await getDb().user.findUniqueOrThrow({ where: { email: second.email } });
    const thirdUser = await getDb().user.findUniqueOrThrow({ where: { email: third.email } });
    const asHuman = (user: typeof secondUser) => ({
      kind: "human" as const,
      via: "session" as const,
      sessionId: `test-${user.id}`,
      sessionKeyHash: "not a key: called in-process",
      userId: user.id,
      email: user.email,
      name: user.name,
      role: "lead" as const,
    });
    const outcomes = await Promise.allSettled([
      decideRequest(getDb(), asHuman(secondUser), request.id, approve),
      decideRequest(otherNode, asHuman(thirdUser), request.id, approve),
    ]);
    const won = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const lost = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ code: "ALREADY_DECIDED" });
    expect(await eventsOf(request.id, "request.decided")).toHaveLength(1);
    expect(await approvalCount(request.id)).toBe(2);

    const replay = await api.respond(second.headers, request.id, approve);
    expect(replay.status).toBe(409);
    expect(replay.json.error?.code).toBe("ALREADY_DECIDED");
    expect(await approvalCount(request.id)).toBe(2);
  });

  it("edits need a one-person request: a decision that adds fields is refused with 422", async () => {
    const first = await signedInHuman("lead");
    await sleep(5);
    const agent = await registerAgent();
    const question = await createRequest(agent, { type: "question" });
    const answered = await api.respond(first.headers, question.id, {
      type: "question_response",
      approve: true,
      answer: { option: "eu" },
    });
    expect(answered.status).toBe(422);
    expect(answered.json.error?.code).toBe("EDITS_NEED_ONE_LEAD");
    expect(await approvalCount(question.id)).toBe(0);
  });

  async function setDisabled(email: string, disabled: boolean): Promise<void> {
    const id = await userIdOf(email);
    const changed = await callRoute(userRoute.PATCH, {
      method: "PATCH",
      path: `/api/v1/users/${id}`,
      params: { id },
      body: { disabled },
      headers: (await lead()).headers,
    });
    expect(changed.status).toBe(200);
  }

  it("an approval from a Lead since disabled no longer counts: the next Lead is the first again", async () => {
    const { first, second, id } = await setUp();
    await api.respond(first.headers, id, approve);
    await setDisabled(first.email, true);
    expect((await api.getRequest(second.headers, id)).json.approvals).toEqual([]);
    const partial = await api.respond(second.headers, id, approve);
    expect(partial.json).toMatchObject({ status: "pending", approvals: [{ email: second.email }] });
  });

  it("nor once the Lead is enabled again: the card needs a second Lead, not a stuck 2 of 2", async () => {
    // Red team: re-enabled, the first Lead's approval counted again beside the second's, and the
    // card showed two approvals of two while pending; a third Lead's then dropped the second's.
    const third = await signedInHuman("lead");
    const { first, second, id } = await setUp();
    await api.respond(first.headers, id, approve);
    await setDisabled(first.email, true);
    await api.respond(second.headers, id, approve);
    await setDisabled(first.email, false);

    const waiting = await api.getRequest(second.headers, id);
    expect(waiting.json).toMatchObject({ status: "pending", approvals: [{ email: second.email }] });
    const decided = await api.respond(third.headers, id, approve);
    const approvers = (decided.json.decidedBy as { approvals: { userId: string }[] }).approvals;
    expect(approvers.map((person) => person.userId)).toEqual([
      await userIdOf(second.email),
      await userIdOf(third.email),
    ]);
  });

  it("a first approval past the deadline is refused by the database's clock and expires the request", async () => {
    const first = await signedInHuman("lead");
    await sleep(5);
    const agent = await registerAgent({ requirePlan: true });
    const request = await createRequest(agent, { timeoutSeconds: 5 });
    await getDb()
      .$executeRaw`UPDATE requests SET expires_at = now() - interval '1 second' WHERE id = ${request.id}`;
    const late = await api.respond(first.headers, request.id, approve);
    expect(late.status).toBe(409);
    expect(late.json.error).toMatchObject({
      code: "REQUEST_EXPIRED",
      request: { status: "expired" },
    });
    expect(await approvalCount(request.id)).toBe(0);
  });

  it("the database refuses one person's approval of a request that needs two", async () => {
    const { id } = await setUp();
    const decidedBy = JSON.stringify({ kind: "human", userId: "u", sessionId: "s" });
    await expect(
      getDb()
        .$executeRaw`UPDATE requests SET status = 'approved', responded_at = now(), responded_by = 'x', decided_by = ${decidedBy}::jsonb WHERE id = ${id}`,
    ).rejects.toThrow(/requests_two_person_approval/);
    await expect(
      getDb().$executeRaw`UPDATE requests SET required_approvals = 3 WHERE id = ${id}`,
    ).rejects.toThrow(/requests_required_approvals_range/);
  });

  it("asked again while pending with two approvals required, the pending request needs two from then on", async () => {
    const agent = await registerAgent();
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    const ask = (requiredApprovals?: 2) =>
      inTransaction(getDb(), (tx) =>
        createRequestInTransaction(tx, {
          definition: getProtocolType("shutdown"),
          direction: "agent_to_lead",
          agentId: row.id,
          payload: { reason: "my work is done" },
          senderIncarnation: row.incarnation,
          requiredApprovals,
        }),
      );
    const first = await ask();
    expect(first.request.requiredApprovals).toBe(1);
    const again = await ask(2);
    expect(again).toMatchObject({ isCreated: false, request: { id: first.request.id } });
    expect(again.request.requiredApprovals).toBe(2);
    const once = await ask();
    expect(once.request.requiredApprovals).toBe(2);
  });

  it("only requests to the Lead can need two approvals", async () => {
    const agent = await registerAgent();
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    await expect(
      inTransaction(getDb(), (tx) =>
        createRequestInTransaction(tx, {
          definition: getProtocolType("shutdown"),
          direction: "lead_to_agent",
          agentId: row.id,
          payload: { reason: "done" },
          requiredApprovals: 2,
        }),
      ),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});

describe("a rule raising a card to two Leads while one Lead decides it", () => {
  it("refuses that Lead's approval with 409 SECOND_LEAD_REQUIRED and decides nothing", async () => {
    const first = await signedInHuman("lead");
    const agent = await registerAgent({ requirePlan: true });
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    const { request } = await inTransaction(getDb(), (tx) =>
      createRequestInTransaction(tx, {
        definition: getProtocolType("plan_approval"),
        direction: "agent_to_lead",
        agentId: row.id,
        payload: { plan: "1. force-push main" },
        senderIncarnation: row.incarnation,
      }),
    );
    // Another node holds the agent's row while it raises the card (what writing a two-Lead rule
    // does): the decision reads the request as a one-Lead card, then waits for the lock.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const raising = inTransaction(otherNode, async (tx) => {
      await tx.$queryRaw`SELECT id FROM agents WHERE id = ${row.id} FOR UPDATE`;
      await released;
      await tx.request.update({ where: { id: request.id }, data: { requiredApprovals: 2 } });
    });
    await sleep(100);
    const deciding = api.respond(first.headers, request.id, approve);
    await sleep(300);
    release();
    await raising;

    const refused = await deciding;
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: { code: "SECOND_LEAD_REQUIRED" } });
    const stored = await getDb().request.findUniqueOrThrow({ where: { id: request.id } });
    expect(stored).toMatchObject({ status: "pending", requiredApprovals: 2, decidedBy: null });
    expect(await approvalCount(request.id)).toBe(0);
  });
});

/**
 * Red team: the agent sent the same call as its own card (`POST /requests`), which superseded the
 * two-Lead card the gate raised: the new card needed one Lead, and the first Lead's approval was
 * gone with the old one.
 */
describe("the agent asking again for a call whose card needs two Leads", () => {
  const call = { tool: "bash", args: { command: "rm -rf build" } };
  const approveCall = { type: "tool_approval_response", approve: true };

  async function twoLeadCard() {
    const first = await signedInHuman("lead");
    const second = await signedInHuman("lead");
    const agent = await registerAgent();
    const rule = await callRoute(rulesRoute.POST, {
      path: "/api/v1/rules",
      body: {
        pattern: "bash(rm *)",
        effect: "ask",
        requiredApprovals: 2,
        scope: { kind: "agent", agent: agent.name },
      },
      headers: (await lead()).headers,
    });
    expect(rule.status).toBe(201);
    await sleep(5);
    const asked = await api.toolCall(agent.headers, call);
    return { first, second, agent, id: String(asked.json.requestId) };
  }

  it("keeps the card and the first Lead's approval: the second Lead's decides it", async () => {
    const { first, second, agent, id } = await twoLeadCard();
    expect((await api.respond(first.headers, id, approveCall)).json).toMatchObject({
      status: "pending",
    });

    const again = await api.submitRequest(agent.headers, { type: "tool_approval", payload: call });

    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({
      id,
      requiredApprovals: 2,
      approvals: [{ email: first.email }],
    });
    expect((await api.respond(second.headers, id, approveCall)).json).toMatchObject({
      status: "approved",
    });
    expect((await api.toolCall(agent.headers, call)).json).toMatchObject({ allowed: true });
  });

  it("a card with no approval yet is superseded by one that still needs two", async () => {
    const { agent, id } = await twoLeadCard();

    const again = await api.submitRequest(agent.headers, { type: "tool_approval", payload: call });

    expect(again.status).toBe(201);
    expect(again.json).toMatchObject({ requiredApprovals: 2 });
    expect(await getDb().request.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: "superseded",
    });
  });
});
