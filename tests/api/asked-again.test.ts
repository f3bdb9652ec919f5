import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { normalizePlan } from "../../lib/requests/asked-again";
import { api, createTask, lead, registerAgent, submitPlan, type TestAgent } from "./fixtures";

afterAll(() => getDb().$disconnect());

async function reject(id: string, feedback: string): Promise<void> {
  const { headers } = await lead();
  const response = await api.respond(headers, id, {
    ...(await responseTypeOf(id)),
    approve: false,
    feedback,
  });
  expect(response.status).toBe(200);
}

async function responseTypeOf(id: string): Promise<{ type: string }> {
  const { type } = await getDb().request.findUniqueOrThrow({ where: { id } });
  return { type: `${type}_response` };
}

async function askTool(agent: TestAgent, command: string) {
  const asked = await api.submitRequest(agent.headers, {
    type: "tool_approval",
    payload: { tool: "bash", args: { command } },
  });
  expect(asked.status).toBe(201);
  return asked.json;
}

describe("asked again after rejection", () => {
  it("a plan repeated word for word (spacing and case aside) names the rejection and its feedback", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const first = String((await submitPlan(agent, "1. Delete the build\n2. Rewrite it")).json.id);
    await reject(first, "keep the build");

    const again = await submitPlan(agent, "  1. delete the   build\n2. Rewrite it ");
    expect(again.json.askedAgainAfter).toEqual({ requestId: first, feedback: "keep the build" });
    const { headers } = await lead();
    const listed = await api.listRequests(headers, `?agent=${agent.name}&status=pending`);
    expect((listed.json.items as { askedAgainAfter: unknown }[])[0]?.askedAgainAfter).toEqual({
      requestId: first,
      feedback: "keep the build",
    });
    await reject(String(again.json.id), "still no");

    const changed = await submitPlan(agent, "1. Keep the build\n2. Rewrite src only");
    expect(changed.json.askedAgainAfter).toBeNull();
  });

  it("a tool call with the same call hash is flagged; another command, another agent or an approval are not", async () => {
    const agent = await registerAgent();
    const first = await askTool(agent, "git push --force");
    expect(first.askedAgainAfter).toBeNull();
    await reject(String(first.id), "never force-push");

    expect((await askTool(agent, "git push --force")).askedAgainAfter).toEqual({
      requestId: first.id,
      feedback: "never force-push",
    });
    expect((await askTool(agent, "git push")).askedAgainAfter).toBeNull();
    const other = await registerAgent();
    expect((await askTool(other, "git push --force")).askedAgainAfter).toBeNull();

    const approved = await askTool(other, "rm -rf out");
    const { headers } = await lead();
    await api.respond(headers, String(approved.id), {
      type: "tool_approval_response",
      approve: true,
    });
    expect((await askTool(other, "rm -rf out")).askedAgainAfter).toBeNull();
  });

  it("the gate's own card for a call the Lead refused before a task switch is flagged", async () => {
    const agent = await registerAgent();
    const call = { tool: "bash", args: { command: "git push --force origin main" } };
    const first = await api.toolCall(agent.headers, call);
    const firstId = String(first.json.requestId);
    await reject(firstId, "not on main");
    const { headers } = await lead();
    // A task switch voids the old decision, so the gate asks the Lead again.
    expect((await api.claimTask(agent.headers, await createTask())).status).toBe(200);
    const again = await api.toolCall(agent.headers, call);
    expect(again.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
    const card = await api.getRequest(headers, String(again.json.requestId));
    expect(card.json.askedAgainAfter).toEqual({ requestId: firstId, feedback: "not on main" });
  });

  it("an agent cannot claim or hide the flag itself", async () => {
    const agent = await registerAgent({ requirePlan: true });
    const forged = await api.submitRequest(agent.headers, {
      type: "plan_approval",
      payload: { plan: "x", askedAgainAfter: null },
    });
    expect(forged.status).toBe(400);
  });

  it("normalises plans as a reader would", () => {
    expect(normalizePlan("  A\tplan\n\nwith  SPACES ")).toBe("a plan with spaces");
    expect(normalizePlan("ｆｕｌｌ width")).toBe("full width");
  });
});
