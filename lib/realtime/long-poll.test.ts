import { describe, expect, it, vi } from "vitest";
import type { ConsoleEvent } from "../shared/realtime/contract";
import { EventHub, inboxWaitKey } from "./event-hub";
import { longPollDeadline, LongPollAnswer, type LongPollSource } from "./long-poll";

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

/** A long-poll on alice's inbox with a minute to wait, unless told otherwise. */
function readAliceUntil<T>(
  hub: EventHub,
  source: LongPollSource<T>,
  options: { deadline?: number; clientGone?: AbortSignal } = {},
): Promise<T> {
  return new LongPollAnswer({
    hub,
    key: inboxWaitKey("alice"),
    deadline: options.deadline ?? Date.now() + 60_000,
    clientGone: options.clientGone,
    source,
  }).read();
}

describe("a long-poll", () => {
  it("a wait that ends at its deadline unwoken reads once, not again", async () => {
    const hub = new EventHub();
    const source = reads([], [7]);
    const value = await readAliceUntil(hub, source, { deadline: Date.now() + 50 });
    expect(value).toEqual([]);
    expect(source.count()).toBe(1);
    expect(hub.waiterCount).toBe(0);
  });

  it("an event for the key wakes it, and it reads again", async () => {
    const hub = new EventHub();
    const source = reads([], [7]);
    const answered = readAliceUntil(hub, source);
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
    const answered = readAliceUntil(hub, source, { clientGone: controller.signal });
    await expect.poll(() => hub.waiterCount).toBe(1);
    controller.abort();
    await expect(answered).resolves.toEqual([]);
    expect(source.count()).toBe(1);
    expect(hub.waiterCount).toBe(0);
  });
});

/** A source whose reads answer in turn, counting its holds and their releases. */
function holding(...values: (number[] | Error)[]) {
  let reads = 0;
  const counts = { reads: 0, holds: 0, releases: 0 };
  return {
    counts,
    read: async () => {
      counts.reads = ++reads;
      const value = values[Math.min(reads - 1, values.length - 1)] ?? [];
      if (value instanceof Error) throw value;
      return value;
    },
    isDone: (value: number[]) => value.length > 0,
    hold: () => {
      counts.holds += 1;
      return { release: () => void (counts.releases += 1) };
    },
  };
}

describe("a long-poll's answer", () => {
  it("is started once: a second start would be a second long-poll", async () => {
    const hub = new EventHub();
    const source = reads([1]);
    const poll = new LongPollAnswer({
      hub,
      key: inboxWaitKey("alice"),
      deadline: Date.now() + 60_000,
      clientGone: undefined,
      source,
    });
    const answer = poll.read();
    expect(() => poll.answerTo({ answer: () => undefined, fail: () => undefined })).toThrow(
      "a long-poll is started once",
    );
    await expect(poll.read()).rejects.toThrow("a long-poll is started once");
    expect(await answer).toEqual([1]);
    expect(source.count()).toBe(1);
  });
});

describe("a long-poll's hold on what waiting takes", () => {
  it("is taken only when a read leaves it waiting, once, and given back once at the end", async () => {
    const hub = new EventHub();
    const answered = holding([7]);
    await readAliceUntil(hub, answered);
    const noWait = holding([]);
    await readAliceUntil(hub, noWait, { deadline: Date.now() });
    expect([answered.counts.holds, noWait.counts.holds]).toEqual([0, 0]);

    const waited = holding([], [], [7]);
    const answer = readAliceUntil(hub, waited);
    await expect.poll(() => hub.waiterCount).toBe(1);
    hub.publish([sent(1, "alice")]);
    await expect.poll(() => waited.counts.reads).toBe(2);
    await expect.poll(() => hub.waiterCount).toBe(1);
    hub.publish([sent(2, "alice")]);
    await expect(answer).resolves.toEqual([7]);
    expect(waited.counts).toEqual({ reads: 3, holds: 1, releases: 1 });
    expect(hub.waiterCount).toBe(0);
  });

  it("refused, fails the long-poll with the refusal and leaves no wait behind", async () => {
    const hub = new EventHub();
    const refusal = new Error("all slots taken");
    const source = {
      ...holding([]),
      hold: () => {
        throw refusal;
      },
    };
    await expect(readAliceUntil(hub, source)).rejects.toBe(refusal);
    expect(hub.waiterCount).toBe(0);
  });

  it("is given back when a later read fails, and the failure is the answer", async () => {
    const hub = new EventHub();
    const failure = new Error("database gone");
    const source = holding([], failure);
    const answer = readAliceUntil(hub, source);
    await expect.poll(() => hub.waiterCount).toBe(1);
    hub.publish([sent(3, "alice")]);
    await expect(answer).rejects.toBe(failure);
    expect(source.counts).toEqual({ reads: 2, holds: 1, releases: 1 });
    expect(hub.waiterCount).toBe(0);
  });
});

describe("a long-poll and an event during a read", () => {
  it("reads again when its key's event was published while the read was under way", async () => {
    const hub = new EventHub();
    let finishFirstRead!: (value: number[]) => void;
    let reads = 0;
    const source = {
      read: () => {
        reads += 1;
        return reads === 1
          ? new Promise<number[]>((resolve) => (finishFirstRead = resolve))
          : Promise.resolve([9]);
      },
      isDone: (value: number[]) => value.length > 0,
    };
    const answer = readAliceUntil(hub, source);
    // The wait is in place before the read: the message committed during it wakes it.
    expect(hub.waiterCount).toBe(1);
    hub.publish([sent(4, "alice")]);
    finishFirstRead([]);
    await expect(answer).resolves.toEqual([9]);
    expect(reads).toBe(2);
  });

  it("fails, leaving no wait, when a read throws before it begins", async () => {
    const hub = new EventHub();
    const broken = new Error("no read");
    const source = {
      read: (): Promise<number[]> => {
        throw broken;
      },
      isDone: () => false,
    };
    await expect(readAliceUntil(hub, source)).rejects.toBe(broken);
    expect(hub.waiterCount).toBe(0);
  });
});

describe("a long-poll and a source that throws", () => {
  it("fails on what isDone or answerWoken throws, and the hub still wakes the key's other waits", async () => {
    const hub = new EventHub();
    const judging = new Error("cannot judge");
    const brokenJudge = readAliceUntil(hub, {
      read: async () => [],
      isDone: () => {
        throw judging;
      },
    });
    await expect(brokenJudge).rejects.toBe(judging);

    const answering = new Error("cannot answer");
    const brokenAnswer = readAliceUntil(hub, {
      read: async () => [] as number[],
      isDone: (value: number[]) => value.length > 0,
      answerWoken: (): Promise<number[] | undefined> => {
        throw answering;
      },
    });
    const healthy = readAliceUntil(hub, reads([], [5]));
    await expect.poll(() => hub.waiterCount).toBe(2);
    hub.publish([sent(5, "alice")]);
    await expect(brokenAnswer).rejects.toBe(answering);
    await expect(healthy).resolves.toEqual([5]);
    expect(hub.waiterCount).toBe(0);
  });
});

describe("a long-poll and the wall clock", () => {
  it("ends a read made past its deadline even if the clock steps back during it", async () => {
    const hub = new EventHub();
    const source = holding([]);
    const read = source.read;
    let answered = false;
    const answer = readAliceUntil(
      hub,
      {
        ...source,
        read: () => {
          // The clock steps back while the read runs: `now` is before the deadline again.
          const now = Date.now() - 5;
          vi.spyOn(Date, "now").mockReturnValue(now);
          return read();
        },
      },
      { deadline: Date.now() },
    ).finally(() => (answered = true));
    try {
      await vi.waitFor(() => expect(answered).toBe(true), { timeout: 500 });
      await expect(answer).resolves.toEqual([]);
      expect(source.counts).toEqual({ reads: 1, holds: 0, releases: 0 });
      expect(hub.waiterCount).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
  });
});
