import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { expireDueRequests } from "../../lib/requests/mutations";
import { signedInHuman } from "../route-client";
import { api, lead, registerAgent, type ApiResponse, type TestAgent } from "./fixtures";

afterAll(() => getDb().$disconnect());

type Message = { type: string; content: string; metadata: Record<string, unknown> };

const OPTIONS = [
  { id: "staging", label: "Staging", description: "the shared test environment" },
  { id: "production", label: "Production" },
];

async function ask(agent: TestAgent, payload: Record<string, unknown> = {}, extra = {}) {
  const asked = await api.submitRequest(agent.headers, {
    type: "question",
    payload: { question: "Deploy to staging or production?", options: OPTIONS, ...payload },
    ...extra,
  });
  expect(asked.status).toBe(201);
  return String(asked.json.id);
}

async function answer(id: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return api.respond((await lead()).headers, id, { type: "question_response", ...body });
}

async function answerMessage(agent: TestAgent): Promise<Message | undefined> {
  const inbox = await api.inbox(agent.headers);
  return (inbox.json.messages as Message[]).find((message) => message.type === "question_response");
}

async function pastDeadline(id: string): Promise<void> {
  await getDb().request.update({
    where: { id },
    data: { expiresAt: new Date(Date.now() - 700) },
  });
}

describe("questions", () => {
  it("the agent waits as waiting_answer; the Lead's option reaches it with who answered", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "waiting_answer" });
    // A heartbeat sent before the worker knew of its question cannot take it out of waiting.
    await api.heartbeat(agent.headers, { status: "working" });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "waiting_answer" });

    const { email } = await lead();
    const answered = await answer(id, { approve: true, answer: { option: "staging" } });
    expect(answered.status).toBe(200);
    expect(answered.json).toMatchObject({
      status: "answered",
      respondedBy: email,
      decidedBy: { kind: "human" },
      response: { answer: { option: "staging", label: "Staging", text: null } },
    });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "working" });
    expect((await answerMessage(agent))?.metadata).toMatchObject({
      requestId: id,
      approve: true,
      status: "answered",
      response: { answer: { option: "staging" } },
    });
  });

  it("takes a text when the question allows it, and refuses one when it does not", async () => {
    const agent = await registerAgent();
    const closed = await ask(agent);
    const text = await answer(closed, { approve: true, answer: { text: "neither" } });
    expect(text.status).toBe(422);
    expect(text.json.error?.code).toBe("INVALID_RESPONSE");

    const other = await registerAgent();
    const open = await ask(other, { options: undefined, allowText: true });
    const answered = await answer(open, { approve: true, answer: { text: "  eu-west-1 " } });
    expect(answered.json).toMatchObject({
      status: "answered",
      response: { answer: { option: null, text: "eu-west-1" } },
    });
  });

  it("an option id that does not exist is 422 and changes nothing", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    const refused = await answer(id, { approve: true, answer: { option: "moon" } });
    expect(refused.status).toBe(422);
    expect(refused.json.error).toMatchObject({ code: "INVALID_RESPONSE" });
    expect(refused.json.error?.message).toContain("staging, production");
    expect((await api.getRequest((await lead()).headers, id)).json.status).toBe("pending");
  });

  it("unknown response fields are 422, for questions and for every other type", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    const extra = await answer(id, { approve: true, answer: { option: "staging" }, force: true });
    expect(extra.status).toBe(422);
    expect(extra.json.error?.code).toBe("INVALID_RESPONSE");
    const nested = await answer(id, { approve: true, answer: { option: "staging", why: "x" } });
    expect(nested.status).toBe(422);

    const planned = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "1. ship it" },
    });
    // An answer belongs to questions: a plan's decision has no such field.
    const onPlan = await api.respond((await lead()).headers, String(planned.json.id), {
      type: "plan_approval_response",
      approve: true,
      answer: { option: "staging" },
    });
    expect(onPlan.status).toBe(422);
    expect(onPlan.json.error?.code).toBe("INVALID_RESPONSE");
    expect((await api.getRequest((await lead()).headers, id)).json.status).toBe("pending");
  });

  it("approving without an answer, or declining with one, is 422; declining with feedback leaves it unanswered", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    expect((await answer(id, { approve: true })).status).toBe(422);
    expect(
      (await answer(id, { approve: false, feedback: "no", answer: { option: "staging" } })).status,
    ).toBe(422);
    expect((await answer(id, { approve: false })).json.error?.code).toBe("FEEDBACK_REQUIRED");
    const declined = await answer(id, { approve: false, feedback: "ask the release manager" });
    expect(declined.json).toMatchObject({ status: "unanswered", response: null });
    expect((await answerMessage(agent))?.metadata).toMatchObject({
      approve: false,
      status: "unanswered",
    });
  });

  it("refuses a wrong responder: the agent itself, another agent, a viewer", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    const other = await registerAgent();
    const viewer = await signedInHuman("viewer");
    for (const headers of [agent.headers, other.headers, viewer.headers]) {
      const refused = await api.respond(headers, id, {
        type: "question_response",
        approve: true,
        answer: { option: "staging" },
      });
      expect(refused.status).toBe(403);
    }
    const byAgent = await api.respond(agent.headers, id, {
      type: "question_response",
      approve: true,
      answer: { option: "staging" },
    });
    expect(byAgent.json.error?.code).toBe("NOT_TARGET");
    const wrongType = await answer(id, { type: "plan_approval_response", approve: true });
    expect(wrongType.json.error?.code).toBe("TYPE_MISMATCH");
    expect((await api.getRequest((await lead()).headers, id)).json.status).toBe("pending");
  });

  it("two answers: the second gets 409 ALREADY_DECIDED with the stored answer", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    const [first, second] = await Promise.all([
      answer(id, { approve: true, answer: { option: "staging" } }),
      answer(id, { approve: true, answer: { option: "production" } }),
    ]);
    const results = [first, second].sort((a, b) => a.status - b.status);
    expect(results.map((result) => result.status)).toEqual([200, 409]);
    const stored = results[0]?.json.response;
    expect(results[1]?.json.error).toMatchObject({
      code: "ALREADY_DECIDED",
      request: { id, status: "answered", response: stored },
    });
  });

  it("a replay (same idempotency key) returns the stored question with its answer", async () => {
    const agent = await registerAgent();
    const body = {
      type: "question",
      payload: { question: "Which region?", options: OPTIONS },
      idempotencyKey: "ask-1",
    };
    const asked = await api.submitRequest(agent.headers, body);
    await answer(String(asked.json.id), { approve: true, answer: { option: "production" } });
    const replay = await api.submitRequest(agent.headers, body);
    expect(replay.status).toBe(200);
    expect(replay.json).toMatchObject({
      id: asked.json.id,
      status: "answered",
      response: { answer: { option: "production" } },
    });
  });

  it("an answer after the deadline is refused, and the default answers instead", async () => {
    const agent = await registerAgent();
    const id = await ask(agent, { default: "staging" });
    await pastDeadline(id);
    const late = await answer(id, { approve: true, answer: { option: "production" } });
    expect(late.status).toBe(409);
    expect(late.json.error).toMatchObject({
      code: "REQUEST_EXPIRED",
      request: {
        id,
        status: "answered",
        respondedBy: "system",
        decidedBy: { kind: "timeout", policy: "answer_default" },
        response: { answer: { option: "staging", label: "Staging" } },
      },
    });
    expect((await answerMessage(agent))?.metadata).toMatchObject({
      approve: true,
      status: "answered",
      policy: "answer_default",
      response: { answer: { option: "staging" } },
    });
    expect((await api.me(agent.headers)).json).toMatchObject({ status: "working" });
  });

  it("on timeout a text default answers as text; without a default the question is unanswered", async () => {
    const withText = await registerAgent();
    const textId = await ask(withText, { allowText: true, default: "whichever is free" });
    const bare = await registerAgent();
    const bareId = await ask(bare);
    const listed = await api.getRequest((await lead()).headers, bareId);
    expect(listed.json.timeoutPolicy).toBe("goes unanswered");

    // Past their deadlines by the database's clock, so the sweep takes them (and not requests of
    // other tests, which are not due yet).
    await pastDeadline(textId);
    await pastDeadline(bareId);
    await expireDueRequests(getDb());
    const { headers } = await lead();
    expect((await api.getRequest(headers, textId)).json).toMatchObject({
      status: "answered",
      response: { answer: { option: null, text: "whichever is free" } },
    });
    expect((await api.getRequest(headers, bareId)).json).toMatchObject({
      status: "unanswered",
      response: null,
      decidedBy: { kind: "timeout", policy: "unanswered" },
    });
    // The agent is told which happened.
    expect((await answerMessage(bare))?.metadata).toMatchObject({
      approve: false,
      status: "unanswered",
      policy: "unanswered",
    });
    expect((await api.me(bare.headers)).json).toMatchObject({ status: "working" });
  });

  it("refuses questions that could never be answered", async () => {
    const agent = await registerAgent();
    const cases = [
      { question: "?", options: undefined },
      { question: "?", default: "moon" },
      { question: "?", options: [OPTIONS[0], OPTIONS[0]] },
      {
        question: "?",
        options: Array.from({ length: 10 }, (_, i) => ({ id: `o${i}`, label: "x" })),
      },
    ];
    for (const payload of cases) {
      const refused = await api.submitRequest(agent.headers, { type: "question", payload });
      expect(refused.status).toBe(400);
    }
  });

  it("an answer for a previous incarnation's question is refused", async () => {
    const agent = await registerAgent();
    const id = await ask(agent);
    await api.forceStop((await lead()).headers, agent.name);
    const late = await answer(id, { approve: true, answer: { option: "staging" } });
    expect(late.status).toBe(409);
    expect(["ALREADY_DECIDED", "STALE_INCARNATION"]).toContain(late.json.error?.code);
  });
});
