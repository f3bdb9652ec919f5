import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { HistoryPage } from "./pages/history-page";
import { humanApi, uniqueAgentName } from "./support/api";
import { signedInPage } from "./support/sign-in";

/** The agent's pending tool approval, once its worker has asked. */
async function waitForToolApproval(lead: APIRequestContext, name: string): Promise<string> {
  let id: string | null = null;
  await expect
    .poll(
      async () => {
        const response = await lead.get(`/api/v1/agents/${name}`);
        const { pendingRequests } = (await response.json()) as {
          pendingRequests: { id: string; type: string }[];
        };
        id = pendingRequests.find((request) => request.type === "tool_approval")?.id ?? null;
        return id;
      },
      { timeout: 20_000 },
    )
    .not.toBeNull();
  return id as unknown as string;
}

/** The agent's decided tool approvals, newest first. */
async function toolApprovals(lead: APIRequestContext, name: string) {
  const response = await lead.get(`/api/v1/requests?agent=${name}&type=tool_approval&limit=20`);
  expect(response.status(), await response.text()).toBe(200);
  return ((await response.json()) as { items: Record<string, unknown>[] }).items;
}

test("a rule made from a card lets the next identical call run with no card; history names the rule", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const name = uniqueAgentName("e2e-rule");
  const lead = await humanApi();
  const spawned = await lead.post("/api/v1/agents", {
    data: {
      name,
      role: "e2e ruler",
      requirePlan: false,
      worker: { model: "scripted", script: "test-repeat-risky" },
    },
  });
  expect(spawned.status(), await spawned.text()).toBe(201);
  const cardId = await waitForToolApproval(lead, name);

  const { page, inbox } = await signedInPage(browser);
  await inbox.select(name, "Risky tool call");
  const allow = inbox.detail().getByRole("region", { name: "Always allow this" });
  await expect(allow.getByLabel("Pattern")).toHaveValue("bash(rm -rf build)");
  // The preview counts the card itself: one past request this rule would have matched.
  await expect(allow.getByRole("status")).toHaveText("Would have matched 1 past request.");
  const { violations } = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  expect(violations.map((violation) => `${violation.id}: ${violation.help}`)).toEqual([]);
  // Keyboard only: choose "for <agent>" (the default), an expiry, then create.
  await allow.getByLabel("Expires").selectOption({ label: "for 30 minutes" });
  await allow.getByRole("radio", { name }).focus();
  await expect(allow.getByRole("radio", { name })).toBeChecked();
  await allow.getByRole("button", { name: "Create rule & allow" }).focus();
  await page.keyboard.press("Enter");
  await inbox.expectDecided(/approved by/);

  // The worker runs the approved call, then the identical one: the rule approves it, no card.
  await expect
    .poll(async () => (await toolApprovals(lead, name)).length, { timeout: 20_000 })
    .toBe(2);
  const [byRule, byLead] = await toolApprovals(lead, name);
  expect(byLead).toMatchObject({ id: cardId, status: "approved" });
  expect(byRule).toMatchObject({
    status: "approved",
    respondedBy: "rule bash(rm -rf build)",
    decidedBy: { kind: "rule", pattern: "bash(rm -rf build)" },
  });
  const pending = await lead.get(`/api/v1/agents/${name}`);
  expect(((await pending.json()) as { pendingRequests: unknown[] }).pendingRequests).toEqual([]);

  const history = new HistoryPage(page);
  await history.goto(`?agent=${name}`);
  const historyRow = history.row(String(byRule?.id));
  await expect(historyRow).toContainText("approved");
  await expect(historyRow).toContainText("rule bash(rm -rf build)");

  await page.goto("/rules");
  const row = page.locator(`tr[data-rule-pattern="bash(rm -rf build)"]`).filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId("rule-expiry")).toContainText("until");
  await row.getByRole("combobox", { name: /^Mode of/ }).selectOption("shadow");
  await expect(row.getByRole("combobox", { name: /^Mode of/ })).toHaveValue("shadow");
  await row.getByRole("button", { name: /^Delete rule/ }).click();
  await expect(row).toHaveCount(0);

  await lead.post(`/api/v1/agents/${name}/force-stop`);
  await lead.dispose();
  await page.context().close();
});
