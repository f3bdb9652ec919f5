import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";
import { holdLock } from "../support/held-lock";
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
    await makeTwoLeadRule(agent.name);
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

/**
 * Red team: `decideInTransaction` (lib/requests/mutations.ts) reads the request before it takes
 * the agent's row lock and judges it (findRefusal) and takes the two-person step
 * (takeApprovalStep) on that read. A first approval that read the request while another Lead's
 * rejection held the lock is then "recorded" on a request that is already rejected: 200 with
 * `status: "pending"`, a `request_approvals` row and a `request.approval_recorded` event after the
 * `request.decided` one. It should be 409 ALREADY_DECIDED with the rejection, and write nothing.
 */
describe("a first approval racing a rejection of a two-Lead request (red team)", () => {
  it("is refused as already decided, and records nothing on the rejected request", async () => {
    const first = await lead();
    const second = await signedInHuman("lead");
    const agent = await registerAgent();
    await makeTwoLeadRule(agent.name);
    const card = await api.toolCall(agent.headers, {
      tool: "bash",
      args: { command: "rm -rf build" },
    });
    const id = String(card.json.requestId);

    // Both decisions read the pending request, then queue on the agent's row: the rejection first.
    const held = await holdLock("SELECT 1 FROM agents WHERE name = $1 FOR UPDATE", [agent.name]);
    const rejection = api.respond(second.headers, id, {
      type: "tool_approval_response",
      approve: false,
      feedback: "not this one",
    });
    await held.untilWaiting(1);
    const approval = api.respond(first.headers, id, {
      type: "tool_approval_response",
      approve: true,
    });
    await held.untilWaiting(2);
    await held.release();
    const [rejected, approved] = await Promise.all([rejection, approval]);

    expect(rejected.status).toBe(200);
    expect(rejected.json.status).toBe("rejected");
    expect(approved.status).toBe(409);
    expect(approved.json.error).toMatchObject({
      code: "ALREADY_DECIDED",
      request: { id, status: "rejected" },
    });
    const db = getDb();
    expect(await db.requestApproval.count({ where: { requestId: id } })).toBe(0);
    expect(
      await db.event.count({
        where: { subject: `request:${id}`, kind: "request.approval_recorded" },
      }),
    ).toBe(0);
  });
});
