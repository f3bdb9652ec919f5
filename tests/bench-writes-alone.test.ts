import { describe, expect, it } from "vitest";
import { openWritesAlone } from "../bench/writes-alone";
import type { HumanActor } from "../lib/auth/actor";
import { getDb } from "../lib/db";
import { lead, registerAgent } from "./api/fixtures";

const databaseUrl = () => process.env.DATABASE_URL as string;

/** The test file's signed-in Lead, as the domain functions take a responder. */
async function leadActor(): Promise<HumanActor> {
  const { email } = await lead();
  const user = await getDb().user.findUniqueOrThrow({ where: { email } });
  return {
    kind: "human",
    userId: user.id,
    email: user.email,
    name: user.name,
    role: "lead",
    via: "session",
    sessionId: "bench-writes-alone",
  };
}

describe("G3.3's writes without HTTP (bench/writes-alone.ts)", () => {
  it("submits plans through the domain function, leaves one pending per agent, and approves them all", async () => {
    const agents = await Promise.all([registerAgent(), registerAgent(), registerAgent()]);
    const names = agents.map((agent) => agent.name);
    const requestsOf = (status: "pending" | "superseded" | "approved") =>
      getDb().request.count({ where: { sender: { in: names }, status } });

    const writes = await openWritesAlone({
      databaseUrl: databaseUrl(),
      agents,
      lead: await leadActor(),
      concurrency: 3,
    });
    try {
      // Opening warmed each caller's statements up and decided what that left pending.
      expect(await requestsOf("pending")).toBe(0);
      const approvedAfterWarmUp = await requestsOf("approved");
      expect(approvedAfterWarmUp).toBe(3);

      const submitted = await writes.submit(300);
      expect(submitted.count).toBeGreaterThan(3);
      expect(submitted.perSecond).toBeGreaterThan(0);
      expect(await requestsOf("pending")).toBe(3);
      // A busy agent's later plans supersede its pending one, as in G3.3.
      expect(await requestsOf("superseded")).toBeGreaterThanOrEqual(submitted.count - 3);

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
        lead: await leadActor(),
        concurrency: 2,
      }),
    ).rejects.toThrow("1 agents found: fewer than 2 callers need");
  });
});
