import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";
import { holdLock } from "../support/held-lock";
import { api, lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

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
    const rule = await callRoute(rulesRoute.POST, {
      path: "/api/v1/rules",
      body: {
        pattern: "bash(rm *)",
        effect: "ask",
        requiredApprovals: 2,
        scope: { kind: "agent", agent: agent.name },
      },
      headers: first.headers,
    });
    expect(rule.status).toBe(201);
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
    await new Promise((resolve) => setTimeout(resolve, 300));
    const approval = api.respond(first.headers, id, {
      type: "tool_approval_response",
      approve: true,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
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
