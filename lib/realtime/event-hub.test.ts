import { describe, expect, it } from "vitest";
import type { ConsoleEvent } from "../shared/realtime/contract";
import { EventHub, inboxWaitKey, requestEndWaitKey, waitKeyOf } from "./event-hub";

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

  it("wakes exactly the waiters of the published key and keeps no entry afterwards", async () => {
    const hub = new EventHub();
    const alice = hub.wait(inboxWaitKey("alice"), 60_000);
    const bob = hub.wait(inboxWaitKey("bob"), 60_000);
    const sent = event("message.sent", { to: "alice", messageId: 1 });
    hub.publish([sent]);
    await expect(alice.woken).resolves.toBe(sent);
    expect(hub.waiterCount).toBe(1);
    bob.cancel();
    await expect(bob.woken).resolves.toBeNull();
    expect(hub.waiterCount).toBe(0);
  });

  it("answers null when the wait times out or the request is aborted, and forgets the waiter", async () => {
    const hub = new EventHub();
    const timedOut = hub.wait(requestEndWaitKey("req_1"), 5);
    await expect(timedOut.woken).resolves.toBeNull();
    const controller = new AbortController();
    const aborted = hub.wait(requestEndWaitKey("req_2"), 60_000, controller.signal);
    expect(hub.waiterCount).toBe(1);
    controller.abort();
    await expect(aborted.woken).resolves.toBeNull();
    expect(hub.waiterCount).toBe(0);
    await expect(hub.wait("x", 60_000, controller.signal).woken).resolves.toBeNull();
    expect(hub.waiterCount).toBe(0);
  });

  it("calls no per-waiter code for an event that is not theirs", () => {
    const hub = new EventHub();
    const waits = Array.from({ length: 1_000 }, (_, index) =>
      hub.wait(inboxWaitKey(`agent-${index}`), 60_000),
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
