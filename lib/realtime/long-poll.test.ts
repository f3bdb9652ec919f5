import { describe, expect, it } from "vitest";
import type { ConsoleEvent } from "../shared/realtime/contract";
import { EventHub, inboxWaitKey } from "./event-hub";
import { longPollDeadline, readUntil } from "./long-poll";

describe("longPollDeadline", () => {
  it("holds a short wait for all of it", () => {
    for (const wait of [0, 1, 5, 9]) {
      expect(longPollDeadline(1_000, wait, () => 0.999)).toBe(1_000 + wait * 1000);
    }
  });

  it("ends a long wait somewhere in its last tenth, never after it", () => {
    expect(longPollDeadline(0, 30, () => 0)).toBe(30_000);
    expect(longPollDeadline(0, 30, () => 0.5)).toBe(28_500);
    expect(longPollDeadline(0, 30, () => 0.999_999)).toBeGreaterThan(27_000);
    expect(longPollDeadline(0, 10, () => 0.5)).toBe(9_500);
  });

  it("spreads a thousand long-polls opened together over that tenth", () => {
    const deadlines = Array.from({ length: 1_000 }, () => longPollDeadline(0, 30));
    const spread = Math.max(...deadlines) - Math.min(...deadlines);
    expect(Math.min(...deadlines)).toBeGreaterThanOrEqual(27_000);
    expect(Math.max(...deadlines)).toBeLessThanOrEqual(30_000);
    expect(spread).toBeGreaterThan(2_000);
  });
});

function sent(id: number, to: string): ConsoleEvent {
  return {
    id,
    kind: "message.sent",
    subject: `agent:${to}`,
    data: { to, messageId: id },
    at: new Date(0).toISOString(),
  } as unknown as ConsoleEvent;
}

/** A read that answers the values in turn and counts how often it was made. */
function reads(...values: number[][]) {
  let count = 0;
  return {
    read: async () => values[Math.min(count++, values.length - 1)] ?? [],
    isDone: (value: number[]) => value.length > 0,
    count: () => count,
  };
}

describe("readUntil", () => {
  const key = inboxWaitKey("alice");

  it("a wait that ends at its deadline unwoken reads once, not again", async () => {
    const hub = new EventHub();
    const source = reads([], [7]);
    const value = await readUntil({
      hub,
      key,
      deadline: Date.now() + 50,
      clientGone: undefined,
      source,
    });
    expect(value).toEqual([]);
    expect(source.count()).toBe(1);
    expect(hub.waiterCount).toBe(0);
  });

  it("an event for the key wakes it, and it reads again", async () => {
    const hub = new EventHub();
    const source = reads([], [7]);
    const answered = readUntil({
      hub,
      key,
      deadline: Date.now() + 60_000,
      clientGone: undefined,
      source,
    });
    await expect.poll(() => hub.waiterCount).toBe(1);
    hub.publish([sent(1, "bob")]);
    hub.publish([sent(2, "alice")]);
    await expect(answered).resolves.toEqual([7]);
    expect(source.count()).toBe(2);
    expect(hub.waiterCount).toBe(0);
  });

  it("a client that leaves gets no read made for it", async () => {
    const hub = new EventHub();
    const source = reads([], [7]);
    const controller = new AbortController();
    const answered = readUntil({
      hub,
      key,
      deadline: Date.now() + 60_000,
      clientGone: controller.signal,
      source,
    });
    await expect.poll(() => hub.waiterCount).toBe(1);
    controller.abort();
    await expect(answered).resolves.toEqual([]);
    expect(source.count()).toBe(1);
    expect(hub.waiterCount).toBe(0);
  });
});
