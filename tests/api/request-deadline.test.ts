import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { callApi, signedInHuman } from "../route-client";
import { api, createToken, expireOwnAt, lead, registerAgent, submitPlan } from "./fixtures";

afterAll(() => getDb().$disconnect());

async function extend(headers: Record<string, string>, id: string, body: unknown) {
  const response = await callApi({ path: `/api/v1/requests/${id}/deadline`, body, headers });
  return {
    status: response.status,
    json: (response.json ?? {}) as {
      expiresAt?: string;
      status?: string;
      error?: { code: string; message: string };
    },
  };
}

/** A second past `moment`. */
const justAfter = (moment: Date) => new Date(moment.getTime() + 1_000);

async function stored(id: string) {
  return getDb().request.findUniqueOrThrow({ where: { id } });
}

describe("extending a request's deadline: POST /requests/{id}/deadline", () => {
  it("moves the deadline, records it as an event, and the sweeper keeps to the new one", async () => {
    const { headers, email } = await lead();
    const agent = await registerAgent({ requirePlan: true });
    const id = String((await submitPlan(agent)).json.id);
    const before = (await stored(id)).expiresAt;

    const extended = await extend(headers, id, { extendSeconds: 600 });
    expect(extended.status).toBe(200);
    const after = new Date(String(extended.json.expiresAt));
    expect(after.getTime() - before.getTime()).toBe(600_000);
    expect((await stored(id)).expiresAt).toEqual(after);
    const event = await getDb().event.findFirstOrThrow({
      where: { kind: "request.deadline_extended", subject: `request:${id}` },
    });
    expect(event.data).toEqual({
      requestId: id,
      type: "plan_approval",
      agent: agent.name,
      expiresAt: after.toISOString(),
      extendedBy: email,
    });

    // Past the old deadline the request is not due; past the new one the sweeper expires it.
    expect(await expireOwnAt(id, justAfter(before))).toBeNull();
    expect((await stored(id)).status).toBe("pending");
    expect(await expireOwnAt(id, justAfter(after))).toMatchObject({ id, status: "expired" });
    expect((await stored(id)).status).toBe("expired");
  });

  it("never past a day after the request was asked", async () => {
    const { headers } = await lead();
    const agent = await registerAgent({ requirePlan: true });
    const id = String((await submitPlan(agent)).json.id);
    const before = (await stored(id)).expiresAt;
    const tooFar = await extend(headers, id, { extendSeconds: 86_400 });
    expect(tooFar.status).toBe(422);
    expect(tooFar.json.error?.code).toBe("DEADLINE_TOO_FAR");
    expect((await stored(id)).expiresAt).toEqual(before);
    expect(
      await getDb().event.count({
        where: { kind: "request.deadline_extended", subject: `request:${id}` },
      }),
    ).toBe(0);
    // Up to the day, in steps.
    expect((await extend(headers, id, { extendSeconds: 43_200 })).status).toBe(200);
    expect((await extend(headers, id, { extendSeconds: 43_200 })).json.error?.code).toBe(
      "DEADLINE_TOO_FAR",
    );
  });

  it("only a pending request not yet due, waiting on the Lead", async () => {
    const { headers } = await lead();
    const agent = await registerAgent({ requirePlan: true });
    const decided = String((await submitPlan(agent)).json.id);
    await api.respond(headers, decided, { type: "plan_approval_response", approve: true });
    const late = await extend(headers, decided, { extendSeconds: 600 });
    expect(late.status).toBe(409);
    expect(late.json.error?.code).toBe("ALREADY_DECIDED");

    const other = await registerAgent({ requirePlan: true });
    const due = String((await submitPlan(other)).json.id);
    await getDb().request.update({
      where: { id: due },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const revived = await extend(headers, due, { extendSeconds: 600 });
    expect(revived.status).toBe(409);
    expect(revived.json.error?.code).toBe("REQUEST_EXPIRED");

    const stopping = await registerAgent();
    const shutdown = await api.requestShutdown(headers, stopping.name, {});
    const toAgent = await extend(headers, String(shutdown.json.id), { extendSeconds: 600 });
    expect(toAgent.status).toBe(403);
    expect(toAgent.json.error?.code).toBe("NOT_TARGET");

    const unknown = await extend(headers, `req_${"0".repeat(32)}`, { extendSeconds: 600 });
    expect(unknown.status).toBe(404);
  });

  it("is the Lead's: refused to viewers, read tokens and the agent itself; bounded input", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const id = String((await submitPlan(agent)).json.id);
    const before = (await stored(id)).expiresAt;
    const viewer = await signedInHuman("viewer");
    expect((await extend(viewer.headers, id, { extendSeconds: 600 })).status).toBe(403);
    const read = await createToken("read");
    expect((await extend(read.headers, id, { extendSeconds: 600 })).status).toBe(403);
    expect((await extend(agent.headers, id, { extendSeconds: 600 })).status).toBe(403);
    const { headers } = await lead();
    for (const body of [
      { extendSeconds: 30 },
      { extendSeconds: 1.5 },
      { extendSeconds: 600, x: 1 },
    ]) {
      expect((await extend(headers, id, body)).status).toBe(400);
    }
    expect((await stored(id)).expiresAt).toEqual(before);
    const decide = await createToken("decide");
    expect((await extend(decide.headers, id, { extendSeconds: 600 })).status).toBe(200);
  });
});
