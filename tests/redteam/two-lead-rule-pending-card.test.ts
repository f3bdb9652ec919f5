import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";
import { api, lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

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

    const created = await callRoute(rulesRoute.POST, {
      path: "/api/v1/rules",
      body: {
        pattern: "bash(rm *)",
        effect: "ask",
        requiredApprovals: 2,
        scope: { kind: "agent", agent: agent.name },
      },
      headers: (await lead()).headers,
    });
    expect(created.status).toBe(201);

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
});
