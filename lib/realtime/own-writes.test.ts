import { afterEach, describe, expect, it, vi } from "vitest";
import { OwnWrites } from "./own-writes";

const writes = new OwnWrites<string>("handshakeOwnWritesTest");

afterEach(() => {
  vi.useRealTimers();
});

describe("what this node has just written, kept for its event", () => {
  it("is taken once, or found by every reader", async () => {
    writes.keep("once", "row");
    expect(await writes.take("once")).toBe("row");
    expect(await writes.take("once")).toBeUndefined();

    writes.keep("shared", "message");
    expect(await writes.find("shared")).toBe("message");
    expect(await writes.find("shared")).toBe("message");
    expect(await writes.find("never kept")).toBeUndefined();
  });

  it("keeps the newest 256: a flood nobody looks for is pushed out, and dropped", async () => {
    for (let index = 0; index < 1_000; index++) writes.keep(`n${index}`, `w${index}`);
    expect(await writes.find("n743")).toBeUndefined();
    expect(await writes.find("n744")).toBe("w744");
    expect(await writes.find("n999")).toBe("w999");
    const held = (globalThis as { handshakeOwnWritesTest?: Map<string, unknown> })
      .handshakeOwnWritesTest;
    expect(held?.size).toBe(256);
  });

  it("keeps a write seconds, not until newer ones push it out", async () => {
    const at = Date.now() + 60_000;
    writes.keep("stale", "a", at);
    writes.keep("kept", "b", at + 5_000);
    // Gone once 10 s have passed, looked for or not.
    expect(await writes.take("kept", at + 9_000)).toBe("b");
    expect(await writes.find("stale", at + 10_000)).toBeUndefined();
    writes.keep("old", "c", at);
    writes.keep("new", "d", at + 10_001);
    // Dropped from memory by the next write, not only refused when asked for.
    const held = (globalThis as { handshakeOwnWritesTest?: Map<string, unknown> })
      .handshakeOwnWritesTest;
    expect(held?.has("old")).toBe(false);
    expect(await writes.take("new", at + 10_001)).toBe("d");
  });

  it("waits for a statement that has committed but not answered, a second at most", async () => {
    let answer: (value: string | undefined) => void = () => undefined;
    writes.keep("pending", new Promise((resolve) => (answer = resolve)));
    const taken = writes.take("pending");
    answer("row");
    expect(await taken).toBe("row");

    writes.keep("wrote nothing", Promise.resolve(undefined));
    expect(await writes.take("wrote nothing")).toBeUndefined();

    vi.useFakeTimers();
    writes.keep("late", new Promise(() => undefined));
    const late = writes.take("late");
    let isSettled = false;
    void late.then(() => (isSettled = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(isSettled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await late).toBeUndefined();
  });
});
