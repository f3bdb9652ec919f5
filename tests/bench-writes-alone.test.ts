import { describe, expect, it } from "vitest";
import { openLoopWritesAlone, openWritesAlone } from "../bench/writes-alone";
import { getDb } from "../lib/db";
import { createToken, registerAgent } from "./api/fixtures";

const databaseUrl = () => process.env.DATABASE_URL as string;

describe("G3.3's writes without HTTP (bench/writes-alone.ts)", () => {
  it("submits plans through the domain function, leaves one pending per agent, and approves them all", async () => {
    const agents = await Promise.all([registerAgent(), registerAgent(), registerAgent()]);
    const names = agents.map((agent) => agent.name);
    const requestsOf = (status: "pending" | "superseded" | "approved") =>
      getDb().request.count({ where: { sender: { in: names }, status } });

    const writes = await openWritesAlone({
      databaseUrl: databaseUrl(),
      agents,
      leadToken: (await createToken("decide")).token,
      concurrency: 3,
    });
    try {
      // Opening warmed each caller's statements up and decided what that left pending.
      expect(await requestsOf("pending")).toBe(0);
      const approvedAfterWarmUp = await requestsOf("approved");
      expect(approvedAfterWarmUp).toBe(3);

      const supersededBefore = await requestsOf("superseded");
      const submitted = await writes.submit(300);
      expect(submitted.count).toBeGreaterThan(3);
      expect(submitted.perSecond).toBeGreaterThan(0);
      expect(await requestsOf("pending")).toBe(3);
      // A busy agent's later plans supersede its pending one, as in G3.3: all but the last three.
      expect(await requestsOf("superseded")).toBeGreaterThanOrEqual(submitted.count - 3);
      expect((await requestsOf("superseded")) - supersededBefore).toBe(submitted.count - 3);

      const decided = await writes.decidePending();
      expect(decided.count).toBe(3);
      expect(await requestsOf("pending")).toBe(0);
      expect(await requestsOf("approved")).toBe(approvedAfterWarmUp + 3);
      // Nothing is left for a second call to decide.
      expect((await writes.decidePending()).count).toBe(0);
    } finally {
      await writes.close();
    }
  });

  it("refuses to start with fewer agents than callers", async () => {
    const agent = await registerAgent();
    await expect(
      openWritesAlone({
        databaseUrl: databaseUrl(),
        agents: [agent],
        leadToken: (await createToken("decide")).token,
        concurrency: 2,
      }),
    ).rejects.toThrow("1 agents: fewer than 2 callers need");
  });

  it("decides only as a human: an agent's token in the Lead's place is refused before any write", async () => {
    const agents = await Promise.all([registerAgent(), registerAgent()]);
    await expect(
      openWritesAlone({
        databaseUrl: databaseUrl(),
        agents,
        leadToken: agents[0]!.token,
        concurrency: 2,
      }),
    ).rejects.toThrow("the Lead's token names no human");
    const written = await getDb().request.count({
      where: { sender: { in: agents.map((agent) => agent.name) } },
    });
    expect(written).toBe(0);
  });
});

describe("G3.2's two writes without HTTP (bench/writes-alone.ts)", () => {
  it("submits a plan and approves it, loop after loop, timing each, and leaves nothing pending", async () => {
    const agent = await registerAgent();
    const requestsOf = (status: "pending" | "approved") =>
      getDb().request.count({ where: { sender: agent.name, status } });
    const writes = await openLoopWritesAlone({
      databaseUrl: databaseUrl(),
      agent,
      leadToken: (await createToken("decide")).token,
    });
    try {
      // Opening warmed the statements up with loops of their own.
      const approvedAfterWarmUp = await requestsOf("approved");
      expect(approvedAfterWarmUp).toBeGreaterThan(0);
      const loopMs = await writes.measure(4);
      expect(loopMs).toHaveLength(4);
      for (const ms of loopMs) expect(ms).toBeGreaterThan(0);
      expect(await requestsOf("approved")).toBe(approvedAfterWarmUp + 4);
      expect(await requestsOf("pending")).toBe(0);
      const messages = await getDb().message.count({
        where: { recipient: agent.name, type: "plan_approval_response" },
      });
      expect(messages).toBe(approvedAfterWarmUp + 4);
    } finally {
      await writes.close();
    }
  });

  it("refuses an agent's token in the Lead's place before any write", async () => {
    const [agent, other] = await Promise.all([registerAgent(), registerAgent()]);
    await expect(
      openLoopWritesAlone({ databaseUrl: databaseUrl(), agent, leadToken: other.token }),
    ).rejects.toThrow("the Lead's token names no human");
    expect(await getDb().request.count({ where: { sender: agent.name } })).toBe(0);
  });
});
