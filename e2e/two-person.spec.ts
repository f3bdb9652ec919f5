import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { HistoryPage } from "./pages/history-page";
import { E2E_LEAD } from "./support/accounts";
import { createHuman, humanApi, registerApiAgent } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

// Needs the rules work (POST /api/v1/rules) to make a request that two Leads must approve.
test.afterEach(closeSignedInPages);

async function pendingToolApproval(lead: APIRequestContext, name: string): Promise<string> {
  let id: string | null = null;
  await expect
    .poll(async () => {
      const response = await lead.get(`/api/v1/agents/${name}`);
      const { pendingRequests } = (await response.json()) as {
        pendingRequests: { id: string; type: string }[];
      };
      id = pendingRequests.find((request) => request.type === "tool_approval")?.id ?? null;
      return id;
    })
    .not.toBeNull();
  return id as unknown as string;
}

test("a two-person rule: one Lead's approval waits for a second, different Lead", async ({
  browser,
}) => {
  test.setTimeout(60_000);
  const lead = await humanApi();
  const secondLead = await createHuman(lead, "lead");
  const agent = await registerApiAgent(lead, { requirePlan: false });
  // The agent's own: a rule for everyone would ask two Leads for every later spec's rm.
  const rule = await lead.post("/api/v1/rules", {
    data: {
      pattern: "bash(rm *)",
      effect: "ask",
      scope: { kind: "agent", agent: agent.name },
      requiredApprovals: 2,
    },
  });
  expect(rule.status(), await rule.text()).toBe(201);

  const verdict = await agent.api.post("/api/v1/tool-calls", {
    data: { tool: "bash", args: { command: "rm -rf ./build" } },
  });
  expect(verdict.status(), await verdict.text()).toBe(200);
  expect(await verdict.json()).toMatchObject({ allowed: false });
  const id = await pendingToolApproval(lead, agent.name);

  const first = await signedInPage(browser);
  const item = first.inbox.requestItem(agent.name, "Risky tool call");
  await expect(item).toContainText("0 of 2 approvals");
  await first.inbox.select(agent.name, "Risky tool call");
  await first.inbox.approve();
  const progress = first.inbox.detail().getByRole("region", { name: "Approvals" });
  await expect(progress).toContainText("1 of 2 approvals — waiting for a second Lead");
  await expect(progress).toContainText(`Approved by ${E2E_LEAD.email}`);
  const approve = first.inbox.detail().getByRole("button", { name: "Approve" });
  await expect(approve).toBeDisabled();
  await expect(approve).toHaveAccessibleDescription(/Another Lead must approve it/);
  await expect(item).toContainText("1 of 2 approvals");
  const { violations } = await new AxeBuilder({ page: first.page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  expect(violations.map((violation) => violation.id)).toEqual([]);
  expect((await (await agent.api.get(`/api/v1/requests/${id}`)).json()).status).toBe("pending");

  const second = await signedInPage(browser, secondLead);
  await second.inbox.select(agent.name, "Risky tool call");
  await expect(second.inbox.detail().getByRole("region", { name: "Approvals" })).toContainText(
    `Approved by ${E2E_LEAD.email}`,
  );
  await second.inbox.approve();
  await second.inbox.expectDecided(
    new RegExp(`approved by two Leads: ${E2E_LEAD.email} \\(session\\) and ${secondLead.email}`),
  );

  const decided = (await (await agent.api.get(`/api/v1/requests/${id}`)).json()) as {
    status: string;
    decidedBy: { kind: string; approvals: unknown[] };
  };
  expect(decided.status).toBe("approved");
  expect(decided.decidedBy.kind).toBe("leads");
  expect(decided.decidedBy.approvals).toHaveLength(2);

  const history = new HistoryPage(second.page);
  await history.goto();
  await history.filterBy("Agent", agent.name);
  await expect(history.row(id)).toContainText(`two Leads: ${E2E_LEAD.email} (session)`);
});
