import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team: "return the pending one" for a duplicate shutdown does not look at the direction
 * (createRequestInTransaction, lib/requests/mutations.ts: the pending lookup is per agent and
 * type only). A Lead asking an agent to stop while the agent's own "may I stop?" waits on the Lead
 * gets back 200 with the agent's request (sender the agent, target the Lead): no shutdown is sent,
 * its timeout (force stop) never applies. An agent asking "may I stop?" while the Lead's shutdown
 * waits on it gets back the Lead's request, whose target is the agent itself. Each caller is told
 * its request exists when it does not; it should get a request of its own direction, or a refusal.
 */
describe("a shutdown asked from both sides (red team)", () => {
  it("the Lead's shutdown is never answered with the agent's own ask", async () => {
    const agent = await registerAgent();
    const ask = await api.submitRequest(agent.headers, {
      type: "shutdown",
      payload: { reason: "my work is done" },
    });
    expect(ask.status).toBe(201);

    const leads = await api.requestShutdown((await lead()).headers, agent.name, {
      reason: "stop now",
      timeoutSeconds: 5,
    });
    if (leads.status < 300) {
      expect(leads.json).toMatchObject({ sender: "lead", target: agent.name });
    } else {
      expect(leads.status).toBe(409);
    }
  });

  it("the agent's 'may I stop?' is never answered with the Lead's request to it", async () => {
    const agent = await registerAgent();
    const leads = await api.requestShutdown((await lead()).headers, agent.name, { reason: "stop" });
    expect(leads.status).toBe(201);

    const ask = await api.submitRequest(agent.headers, {
      type: "shutdown",
      payload: { reason: "may I stop?" },
    });
    if (ask.status < 300) {
      expect(ask.json).toMatchObject({ sender: agent.name, target: "lead" });
    } else {
      expect(ask.status).toBe(409);
    }
  });
});
