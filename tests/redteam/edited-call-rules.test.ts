import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";
import { api, lead, registerAgent, type TestAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

const ASKED = { tool: "bash", args: { command: "rm -rf build", timeoutSeconds: 30 } };
const EDITED_ARGS = { command: "git push --force origin main", timeoutSeconds: 30 };

async function makeRule(agent: TestAgent, body: Record<string, unknown>): Promise<void> {
  const created = await callRoute(rulesRoute.POST, {
    path: "/api/v1/rules",
    body: { pattern: "bash(git push*)", scope: { kind: "agent", agent: agent.name }, ...body },
    headers: (await lead()).headers,
  });
  expect(created.status).toBe(201);
}

/** One Lead approves a card the rule does not cover, with edits the rule does cover. */
async function approveEditedIntoRule(agent: TestAgent): Promise<string> {
  const asked = await api.toolCall(agent.headers, ASKED);
  expect(asked.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
  const requestId = String(asked.json.requestId);
  const decided = await api.respond((await signedInHuman("lead")).headers, requestId, {
    type: "tool_approval_response",
    approve: true,
    editedArgs: EDITED_ARGS,
  });
  expect(decided.json).toMatchObject({ status: "approved" });
  return requestId;
}

/**
 * Red team: the rules judged only the call the agent asked for, so a Lead's edit could turn an
 * innocent card into a call a deny rule forbids, or one a two-Lead rule keeps from any one Lead,
 * and the original's retry was told to run it ({allowed: true, args: <edited>}).
 */
describe("the rules also judge the Lead's edited arguments (red team)", () => {
  it("a deny rule refuses the edited call, by the original's retry or by the edited call", async () => {
    const agent = await registerAgent();
    await makeRule(agent, { effect: "deny" });
    const requestId = await approveEditedIntoRule(agent);

    const retry = await api.toolCall(agent.headers, { ...ASKED, canRunEdits: true });
    expect(retry.json).toMatchObject({ allowed: false, code: "RULE_DENIED" });
    expect(retry.json.args).toBeUndefined();
    const edited = await api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS });
    expect(edited.json).toMatchObject({ allowed: false, code: "RULE_DENIED" });
    expect(await getDb().toolCall.count({ where: { requestId, isAllowed: true } })).toBe(0);
  });

  it("a two-Lead ask rule is not satisfied by one Lead's edit", async () => {
    const agent = await registerAgent();
    await makeRule(agent, { effect: "ask", requiredApprovals: 2 });
    const requestId = await approveEditedIntoRule(agent);

    const retry = await api.toolCall(agent.headers, { ...ASKED, canRunEdits: true });
    expect(retry.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_DENIED", requestId });
    expect(retry.json.args).toBeUndefined();
    // Asked for itself, the edited call gets its own card, for two Leads.
    const edited = await api.toolCall(agent.headers, { tool: "bash", args: EDITED_ARGS });
    expect(edited.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    expect(edited.json.requestId).not.toBe(requestId);
    const card = await getDb().request.findUniqueOrThrow({
      where: { id: String(edited.json.requestId) },
    });
    expect(card.requiredApprovals).toBe(2);
    expect(await getDb().toolCall.count({ where: { requestId, isAllowed: true } })).toBe(0);
  });
});
