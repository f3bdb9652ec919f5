import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";
import { api, lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

async function makeTwoLeadRule(agentName: string): Promise<void> {
  const created = await callRoute(rulesRoute.POST, {
    path: "/api/v1/rules",
    body: {
      pattern: "bash(rm *)",
      effect: "ask",
      requiredApprovals: 2,
      scope: { kind: "agent", agent: agentName },
    },
    headers: (await lead()).headers,
  });
  expect(created.status).toBe(201);
}

/**
 * Red team: a two-Lead ask rule added while a card for the same call is pending (asked before the
 * rule existed) left that card at one approval, even when the agent asked again under the rule;
 * one Lead's click then ran a call the rule said needs two. Decision 023: "the stricter answer wins".
 */
describe("a two-Lead rule and a card already pending for the call (red team)", () => {
  it("the agent's next ask raises the pending card to two Leads", async () => {
    const first = await signedInHuman("lead");
    const agent = await registerAgent();
    const call = { tool: "bash", args: { command: "rm -rf build" } };

    const asked = await api.toolCall(agent.headers, call);
    expect(asked.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    const id = String(asked.json.requestId);

    await makeTwoLeadRule(agent.name);

    const again = await api.toolCall(agent.headers, call);
    expect(again.json).toMatchObject({ allowed: false, requestId: id });
    expect((await getDb().request.findUniqueOrThrow({ where: { id } })).requiredApprovals).toBe(2);

    const one = await api.respond(first.headers, id, {
      type: "tool_approval_response",
      approve: true,
    });
    expect(one.json).toMatchObject({ status: "pending", requiredApprovals: 2 });
    expect((await api.toolCall(agent.headers, call)).json).toMatchObject({ allowed: false });
  });

  it("making the rule raises the pending card, though the agent never asks again", async () => {
    const first = await signedInHuman("lead");
    const agent = await registerAgent();
    const other = await registerAgent();
    const asked = await api.toolCall(agent.headers, {
      tool: "bash",
      args: { command: "rm -rf build" },
    });
    const unrelated = await api.toolCall(agent.headers, {
      tool: "bash",
      args: { command: "git push --force" },
    });
    const elsewhere = await api.toolCall(other.headers, {
      tool: "bash",
      args: { command: "rm -rf build" },
    });
    const id = String(asked.json.requestId);
    const unrelatedId = String(unrelated.json.requestId);
    const elsewhereId = String(elsewhere.json.requestId);

    await makeTwoLeadRule(agent.name);

    const requiredOf = async (requestId: string) =>
      (await getDb().request.findUniqueOrThrow({ where: { id: requestId } })).requiredApprovals;
    expect(await requiredOf(id)).toBe(2);
    // Only the calls the rule matches, in its scope.
    expect(await requiredOf(unrelatedId)).toBe(1);
    expect(await requiredOf(elsewhereId)).toBe(1);
    const one = await api.respond(first.headers, id, {
      type: "tool_approval_response",
      approve: true,
    });
    expect(one.json).toMatchObject({ status: "pending", requiredApprovals: 2 });
  });
});
