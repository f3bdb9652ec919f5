import { afterAll, describe, expect, it } from "vitest";
import { logout } from "../../lib/api/v1/auth";
import { user as userRoute } from "../../lib/api/v1/users";
import { getDb } from "../../lib/db";
import { api, createToken, lead, registerAgent, registerWorker, submitPlan } from "../api/fixtures";
import { callRoute, signedInHuman } from "../route-client";

afterAll(() => getDb().$disconnect());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A plan pending on the Lead, and a reader's long-poll on it already held. */
async function heldPoll(headers: Record<string, string>) {
  const agent = await registerAgent({ requirePlan: true });
  const id = String((await submitPlan(agent)).json.id);
  const polled = api.getRequest(headers, id, "?wait=20");
  await pause(300);
  return { id, polled };
}

async function reject(id: string) {
  const decided = await api.respond((await lead()).headers, id, {
    type: "plan_approval_response",
    approve: false,
    feedback: "SECRET-FEEDBACK",
  });
  expect(decided.status).toBe(200);
}

/**
 * Red team: a long-poll began with a credential, and answered with the decision made after that
 * credential was gone (signed out, disabled, revoked): the feedback reached whoever held the wait.
 */
describe("a human's long-poll whose credential ends while it waits (red team)", () => {
  it("answers 401 after a sign-out, without the decision", async () => {
    const viewer = await signedInHuman("viewer");
    const { id, polled } = await heldPoll(viewer.headers);
    await callRoute(logout.POST, { method: "POST", headers: viewer.headers });
    await reject(id);
    const answer = await polled;
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.json)).not.toContain("SECRET-FEEDBACK");
  });

  it("answers 401 after the user is disabled", async () => {
    const viewer = await signedInHuman("viewer");
    const userId = (await getDb().user.findUniqueOrThrow({ where: { email: viewer.email } })).id;
    const { id, polled } = await heldPoll(viewer.headers);
    const disabled = await callRoute(userRoute.PATCH, {
      path: `/api/v1/users/${userId}`,
      body: { disabled: true },
      headers: (await lead()).headers,
      params: { id: userId },
    });
    expect(disabled.status).toBe(200);
    await reject(id);
    expect((await polled).status).toBe(401);
  });

  it("still answers the human whose session holds, from the cookie and key it began with", async () => {
    const viewer = await signedInHuman("viewer");
    const { id, polled } = await heldPoll(viewer.headers);
    await reject(id);
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ status: "rejected", feedback: "SECRET-FEEDBACK" });
  });

  it("answers 401 after its token is revoked", async () => {
    const reader = await createToken("read");
    const { id, polled } = await heldPoll(reader.headers);
    expect((await api.revokeToken((await lead()).headers, reader.id)).status).toBe(200);
    await reject(id);
    expect((await polled).status).toBe(401);
  });
});

/** A worker's plan pending on the Lead, and the worker's own long-poll on it already held. */
async function workersHeldPoll() {
  const worker = await registerWorker();
  const id = String((await submitPlan(worker)).json.id);
  const polled = api.getRequest(worker.headers, id, "?wait=20");
  await pause(300);
  return { worker, id, polled };
}

/**
 * Red team, round nine: a worker's token was replaced (`worker-token`, meant to leave one process
 * able to act as the agent), and the old token's held long-polls still answered with the Lead's
 * message and the decision's feedback.
 */
describe("an agent's long-poll whose token is replaced while it waits (red team)", () => {
  it("answers 401 on the inbox, without the message", async () => {
    // In-process, no bridge wakes the inbox: the wait ends at its time, then reads.
    const worker = await registerWorker();
    const polled = api.inbox(worker.headers, "?wait=2");
    await pause(300);
    const leadHeaders = (await lead()).headers;
    expect((await api.workerToken(leadHeaders, worker.name)).status).toBe(200);
    const sent = await api.sendMessage(leadHeaders, { to: worker.name, content: "SECRET-MESSAGE" });
    expect(sent.status).toBe(201);
    const answer = await polled;
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.json)).not.toContain("SECRET-MESSAGE");
  });

  it("answers 401 on its own request, without the decision", async () => {
    const { worker, id, polled } = await workersHeldPoll();
    expect((await api.workerToken((await lead()).headers, worker.name)).status).toBe(200);
    await reject(id);
    const answer = await polled;
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.json)).not.toContain("SECRET-FEEDBACK");
  });

  it("still answers the agent whose token holds", async () => {
    const { id, polled } = await workersHeldPoll();
    await reject(id);
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ status: "rejected", feedback: "SECRET-FEEDBACK" });
  });
});
