import { afterEach, describe, expect, it, vi } from "vitest";
import { getDb, poolOf } from "../../lib/db";
import { appendEvent } from "../../lib/events/mutations";
import { deliverMessage } from "../../lib/messages/deliver";
import { getEventHub, inboxWaitKey } from "../../lib/realtime/event-hub";
import { decideRequestInFull } from "../../lib/requests/mutations";
import { runEventBridgeDuringFile } from "../support/event-bridge-hooks";
import { api, lead, registerAgent, submitPlan, type ApiResponse, type TestAgent } from "./fixtures";

runEventBridgeDuringFile();

/** Counts the inbox reads (`readAfter`, a hot statement) sent from now on. */
function countInboxReads(): { readonly count: number } {
  const pool = poolOf(getDb());
  if (!pool) throw new Error("the tests' client runs on our pool");
  const query = pool.query.bind(pool) as (config: unknown) => Promise<unknown>;
  const counter = { count: 0 };
  vi.spyOn(pool, "query").mockImplementation(((config: { name?: string }) => {
    if (config.name === "inbox-read") counter.count += 1;
    return query(config);
  }) as typeof pool.query);
  return counter;
}

afterEach(() => {
  vi.restoreAllMocks();
});

type Inbox = { messages: { id: number }[]; cursor: number };

/** A plan waiting for the Lead, and the agent's cursor before its answer. */
async function pendingPlan(): Promise<{ agent: TestAgent; requestId: string; cursor: number }> {
  const agent = await registerAgent();
  const submitted = await submitPlan(agent);
  if (submitted.status !== 201) throw new Error(JSON.stringify(submitted.json));
  const inbox = (await api.inbox(agent.headers)).json as Inbox;
  return { agent, requestId: String(submitted.json.id), cursor: inbox.cursor };
}

/** A long-poll that has read its empty inbox and waits (in an object: awaiting it would wait). */
async function waitingPoll(agent: TestAgent, after: number, wait = 10) {
  const poll = api.inbox(agent.headers, `?after=${after}&wait=${wait}`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { poll };
}

describe("an inbox long-poll woken by a decision (decision 040)", () => {
  it("made on this node answers with its message, unread, exactly as a read shows it", async () => {
    const { agent, requestId, cursor } = await pendingPlan();
    const { poll } = await waitingPoll(agent, cursor);
    const reads = countInboxReads();

    const decided = await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: false,
      feedback: "split step 2 in two",
    });
    expect(decided.status).toBe(200);
    const answered = (await poll).json as Inbox;
    expect(reads.count).toBe(0);

    const read = (await api.inbox(agent.headers, `?after=${cursor}`)).json as Inbox;
    expect(read.messages).toHaveLength(1);
    // Byte for byte: the same fields in the same order.
    expect(JSON.stringify(answered)).toBe(JSON.stringify(read));
    expect(answered.messages[0]).toMatchObject({
      content: "split step 2 in two",
      metadata: { requestId, approve: false, status: "rejected" },
    });
  });

  it("made by another path or node reads the inbox", async () => {
    const { agent, requestId, cursor } = await pendingPlan();
    const { poll } = await waitingPoll(agent, cursor);
    const reads = countInboxReads();
    const leadUser = await getDb().user.findFirstOrThrow({ where: { role: "lead" } });

    await decideRequestInFull(
      getDb(),
      {
        kind: "human",
        userId: leadUser.id,
        email: leadUser.email,
        name: leadUser.name,
        role: "lead",
        via: "session",
        sessionId: "another node's session",
        sessionKeyHash: "not a key: called in-process",
      },
      requestId,
      { type: "plan_approval_response", approve: true },
    );
    const answered = (await poll).json as Inbox;
    expect(reads.count).toBe(1);
    expect(answered.messages).toEqual([
      expect.objectContaining({ metadata: expect.objectContaining({ requestId }) }),
    ]);
  });

  it("keeps waiting when the message is at or below the cursor it was asked after", async () => {
    const { agent, requestId } = await pendingPlan();
    const { poll } = await waitingPoll(agent, Number.MAX_SAFE_INTEGER, 1);
    await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    expect((await poll).json).toEqual({ messages: [], cursor: Number.MAX_SAFE_INTEGER });
  });

  it("reads when a message the bridge never published lies between the cursor and the decision's", async () => {
    const { agent, requestId, cursor } = await pendingPlan();
    const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    // A Lead's message whose transaction stays open while a later event commits: the bridge waits
    // for its event's id, then passes it as a gap, and drops its notification when it commits.
    let release = () => undefined as void;
    const isReleased = new Promise<void>((resolve) => (release = resolve));
    let reportId: (id: number) => void = () => undefined;
    const skippedId = new Promise<number>((resolve) => (reportId = resolve));
    const skipped = getDb().$transaction(
      async (tx) => {
        reportId(
          await deliverMessage(tx, {
            from: "lead",
            to: agent.name,
            agentId: row.id,
            incarnation: row.incarnation,
            type: "message",
            content: "read me first",
          }),
        );
        await isReleased;
      },
      { timeout: 20_000 },
    );
    try {
      const messageId = await skippedId;
      await appendEvent(getDb(), "session.ended", "user:someone", { userId: "someone" });
      const newest = await getDb().event.aggregate({ _max: { id: true } });
      for (let tries = 0; getEventHub().lastId < Number(newest._max.id); tries++) {
        if (tries > 500) throw new Error("the bridge never passed the gap");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const { poll } = await waitingPoll(agent, cursor);
      release();
      await skipped;
      await new Promise((resolve) => setTimeout(resolve, 200));

      await api.respond((await lead()).headers, requestId, {
        type: "plan_approval_response",
        approve: true,
      });
      const answered = (await poll).json as Inbox;
      expect(answered.messages.map((message) => message.id)[0]).toBe(messageId);
      expect(answered).toEqual((await api.inbox(agent.headers, `?after=${cursor}`)).json);
    } finally {
      release();
      await skipped;
    }
  });
});

describe("a decision made on this node wakes its waits at once (decision 052)", () => {
  /** The bridge's events reach no one from now on: only the decision's own wake is left. */
  function silenceTheBridge(): void {
    vi.spyOn(getEventHub(), "publish").mockImplementation(() => undefined);
  }

  it("answers the agent's inbox long-poll with the decision's message before the bridge has it", async () => {
    const { agent, requestId, cursor } = await pendingPlan();
    const { poll } = await waitingPoll(agent, cursor, 3);
    silenceTheBridge();
    const reads = countInboxReads();
    const startedAt = performance.now();

    await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    const answered = (await poll).json as Inbox;
    // Without the wake it waits its three seconds and answers empty.
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    expect(reads.count).toBe(0);
    vi.restoreAllMocks();
    expect(answered).toEqual((await api.inbox(agent.headers, `?after=${cursor}`)).json);
    expect(answered.messages).toEqual([
      expect.objectContaining({ metadata: { requestId, approve: true, status: "approved" } }),
    ]);
  });

  it("gives the message once: the bridge's event wakes a later long-poll past it to nothing", async () => {
    const { agent, requestId, cursor } = await pendingPlan();
    const { poll } = await waitingPoll(agent, cursor);
    const published = new Promise<void>((resolve) => {
      const unsubscribe = getEventHub().subscribe((event) => {
        if (event.kind === "request.decided" && event.data.requestId === requestId) {
          unsubscribe();
          resolve();
        }
      });
    });
    // The bridge publishes only once the agent waits again past the answered message.
    const publish = getEventHub().publish.bind(getEventHub());
    let release = () => undefined as void;
    const isReleased = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(getEventHub(), "publish").mockImplementation((events) => {
      void isReleased.then(() => publish(events));
    });

    await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    const answered = (await poll).json as Inbox;
    expect(answered.messages).toHaveLength(1);
    const { poll: next } = await waitingPoll(agent, answered.cursor, 1);
    release();
    await published;
    expect((await next).json).toEqual({ messages: [], cursor: answered.cursor });
  });

  it("tells the Lead the decision was made even when a wait it wakes throws", async () => {
    const { agent, requestId } = await pendingPlan();
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    // Else the bridge's copy of the decision may reach the wait first, and throw in the bridge.
    silenceTheBridge();
    getEventHub().wait(inboxWaitKey(agent.name), 5_000, undefined, {
      wake: (event) => {
        if (event) throw new Error("a wait that throws");
      },
    });

    const decided = await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    expect(decided.status).toBe(200);
    expect(decided.json).toMatchObject({ id: requestId, status: "approved" });
    expect(logged).toHaveBeenCalledWith(
      "[requests] waking a decision's waits failed",
      expect.any(Error),
    );
  });

  it("never hands a stale incarnation's long-poll the decision its successor was sent", async () => {
    const first = await registerAgent();
    const { cursor } = (await api.inbox(first.headers)).json as Inbox;
    // Held from before the agent was stopped and started again under its name.
    const { poll } = await waitingPoll(first, cursor, 3);
    await api.forceStop((await lead()).headers, first.name);
    const second = await registerAgent({ name: first.name });
    const submitted = await submitPlan(second);
    expect(submitted.status).toBe(201);
    silenceTheBridge();
    const stillWaiting = await Promise.race([
      poll.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 50)),
    ]);
    expect(stillWaiting).toBe(true);

    await api.respond((await lead()).headers, String(submitted.json.id), {
      type: "plan_approval_response",
      approve: false,
      feedback: "for the new incarnation only",
    });
    // Since round nine the ended incarnation's token is read again before the wait answers.
    const answered = await poll;
    expect(answered.json).toMatchObject({ error: { code: "UNAUTHENTICATED" } });
    expect(JSON.stringify(answered.json)).not.toContain("for the new incarnation only");
  });

  it("answers the agent's wait on the request itself before the bridge has its event", async () => {
    const { agent, requestId } = await pendingPlan();
    const wait = api.getRequest(agent.headers, requestId, "?wait=3");
    await new Promise((resolve) => setTimeout(resolve, 200));
    silenceTheBridge();
    const startedAt = performance.now();

    await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    const answered = await wait;
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    expect(answered.json).toMatchObject({ id: requestId, status: "approved" });
  });
});

describe("an inbox answered with this node's decision is known quiet past it (decision 065)", () => {
  /** A plan answered on this node through the agent's long-poll: the cursor past its message. */
  async function answeredPlan(): Promise<{ agent: TestAgent; answered: Inbox }> {
    const { agent, requestId, cursor } = await pendingPlan();
    const { poll } = await waitingPoll(agent, cursor);
    await api.respond((await lead()).headers, requestId, {
      type: "plan_approval_response",
      approve: true,
    });
    const answered = (await poll).json as Inbox;
    expect(answered.messages).toHaveLength(1);
    return { agent, answered };
  }

  /**
   * Runs `attempt` until its long-poll trusted the mark, which `attempt` answers (it sent no read).
   * Other files write events to the same database (decision 079): while the bridge reads the table
   * or holds an event back behind one of their transactions it is not caught up, and no mark is
   * trusted. Without the mark no attempt is trusted, and the test fails.
   */
  async function untilTheMarkIsTrusted(attempt: () => Promise<boolean>): Promise<void> {
    for (let tries = 0; tries < 5; tries++) {
      if (await attempt()) return;
      vi.restoreAllMocks();
    }
    throw new Error("no long-poll trusted the mark in five tries");
  }

  /** Resolves once the bridge has published the `message.sent` of the message `sent` returns. */
  async function sentAndPublished(send: () => Promise<ApiResponse>): Promise<void> {
    const published = new Set<unknown>();
    const unsubscribe = getEventHub().subscribe((event) => {
      if (event.kind === "message.sent") published.add(event.data.messageId);
    });
    try {
      const { id } = (await send()).json;
      for (let tries = 0; !published.has(id); tries++) {
        if (tries > 500) throw new Error(`message ${String(id)} was never published`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      unsubscribe();
    }
  }

  it("lets the agent's next long-poll past it wait without reading, and the next decision answer it", async () => {
    await untilTheMarkIsTrusted(async () => {
      const { agent, answered } = await answeredPlan();
      const next = await submitPlan(agent);
      expect(next.status).toBe(201);
      const reads = countInboxReads();

      const { poll } = await waitingPoll(agent, answered.cursor);
      await api.respond((await lead()).headers, String(next.json.id), {
        type: "plan_approval_response",
        approve: false,
        feedback: "one step at a time",
      });
      const second = (await poll).json as Inbox;
      if (reads.count > 0) return false;
      expect(second.messages).toEqual([expect.objectContaining({ content: "one step at a time" })]);
      expect(second).toEqual((await api.inbox(agent.headers, `?after=${answered.cursor}`)).json);
      return true;
    });
  });

  it("reads at once a message announced after the answer, before the long-poll came", async () => {
    const { agent, answered } = await answeredPlan();
    const leadHeaders = (await lead()).headers;
    await sentAndPublished(() =>
      api.sendMessage(leadHeaders, { to: agent.name, content: "a message after the decision" }),
    );
    const reads = countInboxReads();
    const startedAt = performance.now();

    const next = (await api.inbox(agent.headers, `?after=${answered.cursor}&wait=5`)).json as Inbox;
    // Trusting the mark here would hold the long-poll its five seconds and answer it empty.
    expect(performance.now() - startedAt).toBeLessThan(2_000);
    expect(reads.count).toBe(1);
    expect(next.messages).toEqual([
      expect.objectContaining({ content: "a message after the decision" }),
    ]);
  });

  it("reads for a long-poll from before the answered message, and for a read that does not wait", async () => {
    const { agent, answered } = await answeredPlan();
    const reads = countInboxReads();
    const fromBefore = (await api.inbox(agent.headers, `?after=${answered.cursor - 1}&wait=5`))
      .json as Inbox;
    expect(fromBefore.messages.map((message) => message.id)).toEqual([answered.cursor]);
    expect(reads.count).toBe(1);

    const { agent: other, answered: otherAnswered } = await answeredPlan();
    const readsBefore = reads.count;
    await api.inbox(other.headers, `?after=${otherAnswered.cursor}`);
    expect(reads.count - readsBefore).toBe(1);
  });

  it("is not trusted while the bridge holds back an event, and the long-poll reads", async () => {
    const { agent, answered } = await answeredPlan();
    // A transaction holding an event id open: the bridge holds back every event after it.
    let release = () => undefined as void;
    const isReleased = new Promise<void>((resolve) => (release = resolve));
    let reportAppended = () => undefined as void;
    const appended = new Promise<void>((resolve) => (reportAppended = resolve));
    const open = getDb().$transaction(
      async (tx) => {
        await appendEvent(tx, "session.ended", "user:someone", { userId: "someone" });
        reportAppended();
        await isReleased;
      },
      { timeout: 20_000 },
    );
    try {
      await appended;
      const sent = await api.sendMessage((await lead()).headers, {
        to: agent.name,
        content: "sent behind an open transaction",
      });
      let isPublished = false;
      const unsubscribe = getEventHub().subscribe((event) => {
        if (event.kind === "message.sent" && event.data.messageId === sent.json.id) {
          isPublished = true;
        }
      });
      // Its notification has reached the bridge, which holds it behind the open id.
      await new Promise((resolve) => setTimeout(resolve, 200));

      const next = (await api.inbox(agent.headers, `?after=${answered.cursor}&wait=5`))
        .json as Inbox;
      unsubscribe();
      // Trusting the mark would wait for the bridge to pass the gap and publish the message.
      expect(isPublished).toBe(false);
      expect(next.messages.map((message) => message.id)).toEqual([sent.json.id]);
    } finally {
      release();
      await open;
    }
  });

  it("is trusted once: a message no event announced is read by the long-poll after", async () => {
    await untilTheMarkIsTrusted(async () => {
      const { agent, answered } = await answeredPlan();
      const row = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
      // As a transaction the bridge passed as a gap leaves it: committed, never published.
      const unannounced = await getDb().message.create({
        data: {
          sender: "lead",
          recipient: agent.name,
          agentId: row.id,
          incarnation: row.incarnation,
          type: "message",
          content: "never announced",
        },
      });
      const after = `?after=${answered.cursor}&wait=1`;
      const reads = countInboxReads();

      const first = (await api.inbox(agent.headers, after)).json as Inbox;
      if (reads.count > 0) return false;
      expect(first).toEqual({ messages: [], cursor: answered.cursor });
      const next = (await api.inbox(agent.headers, after)).json as Inbox;
      expect(next.messages.map((message) => message.id)).toEqual([Number(unannounced.id)]);
      return true;
    });
  });
});
