import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import { api, lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team: the two-person rule (decision 023) is applied only when the gate itself raises the
 * card (`decideRiskyCall`, lib/tool-calls/mutations.ts). An agent may raise the card for the same
 * call itself with `POST /api/v1/requests {type: "tool_approval"}`: that card is created with
 * `requiredApprovals: 1` although a two-Lead ask rule covers the call, one Lead's click approves
 * it, and the agent's `POST /tool-calls` then spends it (`spendApprovalOfCall` never compares the
 * approval's `requiredApprovals` with the rule's): the call runs on one Lead's approval, and its
 * verdict even names the two-Lead rule.
 */
describe("a tool approval the agent raises itself, for a call a two-Lead rule covers (red team)", () => {
  it("needs two Leads too: one Lead's approval does not let the call run", async () => {
    const agent = await registerAgent();
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
    const call = { tool: "bash", args: { command: "rm -rf build" } };

    const card = await api.submitRequest(agent.headers, { type: "tool_approval", payload: call });
    expect(card.status).toBe(201);
    const id = String(card.json.id);
    const decided = await api.respond((await lead()).headers, id, {
      type: "tool_approval_response",
      approve: true,
    });
    // Either the card needs two Leads (the first approval is only recorded) ...
    if (decided.status === 200 && decided.json.status === "pending") {
      expect(decided.json.requiredApprovals).toBe(2);
    }

    // ... or, however it was decided, one Lead's approval never runs the call.
    const verdict = await api.toolCall(agent.headers, call);
    expect(verdict.json.allowed).toBe(false);
    const db = getDb();
    expect(
      await db.toolCall.count({
        where: { agent: { name: agent.name }, isAllowed: true, tool: "bash" },
      }),
    ).toBe(0);
  });
});
