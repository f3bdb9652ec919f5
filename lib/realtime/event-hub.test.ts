import { describe, expect, it, vi } from "vitest";
import type { ConsoleEvent } from "../shared/realtime/contract";
import {
  EventHub,
  inboxWaitKey,
  requestEndWaitKey,
  waitKeyOf,
  type WakingEvent,
} from "./event-hub";

let nextId = 1;
function event(kind: string, data: Record<string, unknown>): ConsoleEvent {
  const id = nextId++;
  return {
    id,
    kind,
    subject: "test",
    data,
    at: new Date(0).toISOString(),
  } as unknown as ConsoleEvent;
}

describe("EventHub waiters", () => {
  it("keys a message by its recipient and a request's end by its id; other events wake nobody", () => {
    expect(waitKeyOf(event("message.sent", { to: "alice", messageId: 1 }))).toBe(
      inboxWaitKey("alice"),
    );
    for (const kind of [
      "request.decided",
      "request.expired",
      "request.superseded",
      "request.cancelled",
    ]) {
      expect(waitKeyOf(event(kind, { requestId: "req_1" }))).toBe(requestEndWaitKey("req_1"));
    }
    expect(waitKeyOf(event("request.created", { requestId: "req_1" }))).toBeNull();
    expect(waitKeyOf(event("agent.updated", { agent: "alice" }))).toBeNull();
  });

  it("wakes exactly the waiters of the published key and keeps no entry afterwards", () => {
    const hub = new EventHub();
    const alice = recorder();
    const bob = recorder();
    hub.wait(inboxWaitKey("alice"), 60_000, undefined, alice);
    const bobs = hub.wait(inboxWaitKey("bob"), 60_000, undefined, bob);
    const sent = event("message.sent", { to: "alice", messageId: 1 });
    hub.publish([sent]);
    expect(alice.calls).toEqual([sent]);
    expect(hub.waiterCount).toBe(1);
    bobs.cancel();
    // Cancelled, a wait is gone without a call.
    expect(bob.calls).toEqual([]);
    expect(hub.waiterCount).toBe(0);
  });

  it("wakes the waits of an event committed here without telling its listeners (decision 052)", () => {
    const hub = new EventHub();
    const alice = recorder();
    const bob = recorder();
    hub.wait(inboxWaitKey("alice"), 60_000, undefined, alice);
    hub.wait(inboxWaitKey("bob"), 60_000, undefined, bob);
    const heard: ConsoleEvent[] = [];
    hub.subscribe((published) => heard.push(published));
    const { id: _id, ...committed } = event("message.sent", { to: "alice", messageId: 3 });
    hub.wakeWaitsFor(committed);
    expect(alice.calls).toEqual([committed]);
    expect(bob.calls).toEqual([]);
    // The bridge still publishes it to the consoles, in the log's order.
    expect(heard).toEqual([]);
    expect(hub.lastId).toBe(0);
    expect(hub.waiterCount).toBe(1);
  });

  it("wakes every wait of a key once, whichever of them were cancelled first", () => {
    const hub = new EventHub();
    const key = inboxWaitKey("alice");
    const recorders = Array.from({ length: 5 }, () => recorder());
    const waits = recorders.map((waiter) => hub.wait(key, 60_000, undefined, waiter));
    // The first, a middle one and the last of the list are unlinked before the event.
    for (const index of [0, 2, 4]) waits[index]?.cancel();
    expect(hub.waiterCount).toBe(2);
    const sent = event("message.sent", { to: "alice", messageId: 2 });
    hub.publish([sent]);
    expect(recorders.map((waiter) => waiter.calls.length)).toEqual([0, 1, 0, 1, 0]);
    hub.publish([event("message.sent", { to: "alice", messageId: 3 })]);
    expect(recorders.map((waiter) => waiter.calls.length)).toEqual([0, 1, 0, 1, 0]);
    expect(hub.waiterCount).toBe(0);
  });

  it("does not wake a wait made while the event that woke its waiter is published", () => {
    const hub = new EventHub();
    const key = inboxWaitKey("alice");
    const again = recorder();
    const first = {
      calls: [] as (ConsoleEvent | null)[],
      wake(woken: ConsoleEvent | null) {
        this.calls.push(woken);
        hub.wait(key, 60_000, undefined, again);
      },
    };
    hub.wait(key, 60_000, undefined, first);
    const sent = event("message.sent", { to: "alice", messageId: 4 });
    hub.publish([sent]);
    expect(first.calls).toEqual([sent]);
    expect(again.calls).toEqual([]);
    expect(hub.waiterCount).toBe(1);
  });

  it("wakes with null when the wait times out or the client leaves, and forgets the waiter", async () => {
    const hub = new EventHub();
    const timedOut = recorder();
    hub.wait(requestEndWaitKey("req_1"), 5, undefined, timedOut);
    await vi.waitFor(() => expect(timedOut.calls).toEqual([null]));
    const controller = new AbortController();
    const left = recorder();
    hub.wait(requestEndWaitKey("req_2"), 60_000, controller.signal, left);
    expect(hub.waiterCount).toBe(1);
    controller.abort();
    expect(left.calls).toEqual([null]);
    expect(hub.waiterCount).toBe(0);
    // A client already gone is answered at once, and nothing is kept for it.
    const gone = recorder();
    hub.wait("x", 60_000, controller.signal, gone);
    expect(gone.calls).toEqual([null]);
    expect(hub.waiterCount).toBe(0);
  });

  it("ends a wait up to one timer grain early, never late, with one timer per grain", () => {
    vi.useFakeTimers();
    try {
      vi.setSystemTime(0);
      const hub = new EventHub();
      const first = recorder();
      const second = recorder();
      hub.wait(inboxWaitKey("alice"), 1_049, undefined, first);
      hub.wait(inboxWaitKey("bob"), 1_001, undefined, second);
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(999);
      expect([first.calls, second.calls]).toEqual([[], []]);
      vi.advanceTimersByTime(1);
      expect([first.calls, second.calls]).toEqual([[null], [null]]);
      expect(hub.waiterCount).toBe(0);
      // The last wait of a grain to go takes its timer with it.
      const cancelled = hub.wait(inboxWaitKey("carol"), 5_000, undefined, recorder());
      expect(vi.getTimerCount()).toBe(1);
      cancelled.cancel();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("times a grain by the monotonic clock: a step of the wall clock moves no wait's end", () => {
    vi.useFakeTimers();
    try {
      const hub = new EventHub();
      const long = recorder();
      const short = recorder();
      hub.wait(inboxWaitKey("alice"), 1_000, undefined, long);
      // The wall clock jumps ahead: a grain reckoned by it would put the short wait in the long
      // one's, and end it 900 ms late.
      vi.setSystemTime(Date.now() + 900);
      hub.wait(inboxWaitKey("bob"), 105, undefined, short);
      vi.advanceTimersByTime(105);
      expect(short.calls).toEqual([null]);
      expect(long.calls).toEqual([]);
      vi.advanceTimersByTime(895);
      expect(long.calls).toEqual([null]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("calls no per-waiter code for an event that is not theirs", () => {
    const hub = new EventHub();
    const waits = Array.from({ length: 1_000 }, (_, index) =>
      hub.wait(inboxWaitKey(`agent-${index}`), 60_000, undefined, recorder()),
    );
    let listenerCalls = 0;
    hub.subscribe(() => (listenerCalls += 1));
    hub.publish([event("message.sent", { to: "agent-7", messageId: 2 })]);
    expect(listenerCalls).toBe(1);
    expect(hub.waiterCount).toBe(999);
    for (const wait of waits) wait.cancel();
    expect(hub.waiterCount).toBe(0);
  });
});

/** A waiter that records what it was woken with. */
function recorder() {
  const calls: (WakingEvent | null)[] = [];
  return { calls, wake: (woken: WakingEvent | null) => void calls.push(woken) };
}

describe("EventHub's quiet inboxes (decision 065)", () => {
  const ada = { agentId: "a-1", incarnation: 1 };
  const key = inboxWaitKey("ada");

  /** A hub that published message 7 to ada, whose long-poll was answered with it. */
  function answeredHub(): EventHub {
    const hub = new EventHub();
    hub.publish([event("message.sent", { to: "ada", messageId: 7 })]);
    hub.markInboxAnswered(key, ada, 7);
    return hub;
  }

  it("trusts a mark only while a bridge is attached and caught up", () => {
    expect(answeredHub().takeQuietInbox(key, ada, 7n)).toBe(false);

    const behind = answeredHub();
    behind.attachPublisher({ isCaughtUp: () => false });
    expect(behind.takeQuietInbox(key, ada, 7n)).toBe(false);

    const caughtUp = answeredHub();
    caughtUp.attachPublisher({ isCaughtUp: () => true });
    expect(caughtUp.takeQuietInbox(key, ada, 7n)).toBe(true);

    const detached = answeredHub();
    detached.attachPublisher({ isCaughtUp: () => true })();
    expect(detached.takeQuietInbox(key, ada, 7n)).toBe(false);
  });

  it("notes the messages it wakes for, its own commits' as well as the bridge's", () => {
    const hub = answeredHub();
    hub.attachPublisher({ isCaughtUp: () => true });
    hub.wakeWaitsFor({
      kind: "message.sent",
      subject: key,
      at: new Date(0).toISOString(),
      data: { messageId: 8, from: "lead", to: "ada", type: "message" },
    });
    expect(hub.takeQuietInbox(key, ada, 7n)).toBe(false);
  });
});
