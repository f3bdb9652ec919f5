import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createToken, expireOwnAt, lead, registerAgent, submitPlan } from "./fixtures";

afterAll(() => getDb().$disconnect());

const approve = { type: "plan_approval_response", approve: true };

async function leadUserId(): Promise<string> {
  const { email } = await lead();
  return (await getDb().user.findUniqueOrThrow({ where: { email } })).id;
}

async function storedDecidedBy(id: string): Promise<unknown> {
  return (await getDb().request.findUniqueOrThrow({ where: { id } })).decidedBy;
}

describe("decidedBy: who decided, recorded with the decision", () => {
  it("a signed-in human: the user and the session, beside the unchanged respondedBy", async () => {
    const { headers, email } = await lead();
    const agent = await registerAgent({ requirePlan: true });
    const id = String((await submitPlan(agent)).json.id);
    const decided = await api.respond(headers, id, approve);
    expect(decided.status).toBe(200);
    expect(decided.json.respondedBy).toBe(email);
    const userId = await leadUserId();
    expect(decided.json.decidedBy).toEqual({
      kind: "human",
      userId,
      sessionId: expect.any(String),
    });
    const sessionId = (decided.json.decidedBy as { sessionId: string }).sessionId;
    expect(await getDb().session.count({ where: { id: sessionId, userId } })).toBe(1);
    expect((await api.getRequest(headers, id)).json.decidedBy).toEqual(decided.json.decidedBy);
    expect(await storedDecidedBy(id)).toEqual(decided.json.decidedBy);
  });

  it("a token: always its id and name, from the credential and never from the body", async () => {
    const token = await createToken("decide");
    const agent = await registerAgent({ requirePlan: true });
    const id = String((await submitPlan(agent)).json.id);
    const forged = await api.respond(token.headers, id, {
      ...approve,
      decidedBy: { kind: "human", userId: "someone-else", sessionId: "x" },
    });
    expect(forged.status).toBe(422);
    expect(forged.json.error?.code).toBe("INVALID_RESPONSE");
    expect((await api.getRequest(token.headers, id)).json.status).toBe("pending");

    const decided = await api.respond(token.headers, id, {
      type: "plan_approval_response",
      approve: false,
      feedback: "split it",
    });
    expect(decided.json).toMatchObject({
      status: "rejected",
      decidedBy: {
        kind: "token",
        tokenId: token.id,
        tokenName: token.name,
        userId: await leadUserId(),
      },
    });
    const event = await getDb().event.findFirstOrThrow({
      where: { kind: "request.decided", subject: `request:${id}` },
    });
    expect((event.data as { decidedBy: unknown }).decidedBy).toEqual(decided.json.decidedBy);
  });

  it("a timeout: the policy that acted, for each direction", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const plan = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "slow" },
      timeoutSeconds: 5,
    });
    const other = await registerAgent();
    const shutdown = await api.requestShutdown((await lead()).headers, other.name, {
      timeoutSeconds: 5,
    });
    const later = new Date(Date.now() + 6_000);
    for (const id of [plan.json.id, shutdown.json.id]) await expireOwnAt(String(id), later);
    expect(await storedDecidedBy(String(plan.json.id))).toEqual({
      kind: "timeout",
      policy: "reject",
    });
    expect(await storedDecidedBy(String(shutdown.json.id))).toEqual({
      kind: "timeout",
      policy: "force_stop",
    });
  });

  it("an agent answering the Lead's shutdown: its name and incarnation", async () => {
    const agent = await registerAgent();
    const shutdown = await api.requestShutdown((await lead()).headers, agent.name);
    const answered = await api.respond(agent.headers, String(shutdown.json.id), {
      type: "shutdown_response",
      approve: true,
    });
    expect(answered.json.decidedBy).toEqual({ kind: "agent", agent: agent.name, incarnation: 1 });
  });

  it("supersede and cancel are not decisions: null", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const first = String((await submitPlan(agent, "first")).json.id);
    const second = String((await submitPlan(agent, "second")).json.id);
    await api.forceStop((await lead()).headers, agent.name);
    const { headers } = await lead();
    expect((await api.getRequest(headers, first)).json).toMatchObject({
      status: "superseded",
      decidedBy: null,
    });
    expect((await api.getRequest(headers, second)).json).toMatchObject({
      status: "cancelled",
      decidedBy: null,
    });
  });

  it("the database refuses a decision without it", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const id = String((await submitPlan(agent)).json.id);
    await expect(
      getDb()
        .$executeRaw`UPDATE requests SET status = 'approved', responded_at = now(), responded_by = 'x' WHERE id = ${id}`,
    ).rejects.toThrow(/requests_decision_has_decided_by/);
    await expect(
      getDb()
        .$executeRaw`UPDATE requests SET status = 'approved', responded_at = now(), responded_by = 'x', decided_by = '{"kind":"someone"}' WHERE id = ${id}`,
    ).rejects.toThrow(/requests_decision_has_decided_by/);
    expect(await storedDecidedBy(id)).toBeNull();
  });
});
