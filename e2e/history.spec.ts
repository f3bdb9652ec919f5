import { expect, test, type APIRequestContext } from "@playwright/test";
import { AgentTimelinePage, HistoryPage } from "./pages/history-page";
import { E2E_LEAD } from "./support/accounts";
import { humanApi, uniqueAgentName } from "./support/api";
import { expectNoSidewaysScroll } from "./support/layout";
import { signedInPage } from "./support/sign-in";

type PendingRequest = { id: string; type: string };

/** The agent's pending plan, once its worker has submitted one (other than `except`). */
async function waitForPlan(lead: APIRequestContext, name: string, except?: string) {
  let plan: PendingRequest | undefined;
  await expect
    .poll(
      async () => {
        const response = await lead.get(`/api/v1/agents/${name}`);
        const { pendingRequests } = (await response.json()) as {
          pendingRequests: PendingRequest[];
        };
        plan = pendingRequests.find(
          (request) => request.type === "plan_approval" && request.id !== except,
        );
        return plan?.id ?? null;
      },
      { timeout: 20_000 },
    )
    .not.toBeNull();
  return plan as PendingRequest;
}

async function decidePlan(
  lead: APIRequestContext,
  id: string,
  approve: boolean,
  feedback: string,
): Promise<void> {
  const response = await lead.post(`/api/v1/requests/${id}/responses`, {
    data: { type: "plan_approval_response", approve, feedback },
  });
  expect(response.status(), await response.text()).toBe(200);
}

test("decided requests show who decided and why; filters narrow the list; the agent link opens its timeline", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const name = uniqueAgentName("e2e-hist");
  const lead = await humanApi();
  const spawned = await lead.post("/api/v1/agents", {
    data: {
      name,
      role: "e2e historian",
      requirePlan: true,
      worker: { model: "scripted", script: "write-after-approval" },
    },
  });
  expect(spawned.status(), await spawned.text()).toBe(201);

  // The worker writes before planning (blocked), plans, revises after a rejection.
  const rejectedPlan = await waitForPlan(lead, name);
  const rejection = `too vague, name the file (${name})`;
  await decidePlan(lead, rejectedPlan.id, false, rejection);
  const approvedPlan = await waitForPlan(lead, name, rejectedPlan.id);
  const approvalNote = `ship it (${name})`;
  await decidePlan(lead, approvedPlan.id, true, approvalNote);

  const { page } = await signedInPage(browser);
  const history = new HistoryPage(page);
  await history.goto();
  await history.filterBy("Agent", name);
  await expect(page).toHaveURL(new RegExp(`[?&]agent=${name}`));
  await expect(history.rows()).toHaveCount(2);
  await expectNoSidewaysScroll(page);
  const [newer, older] = [history.rows().nth(0), history.rows().nth(1)];
  await expect(newer).toHaveAttribute("data-request-id", approvedPlan.id);
  await expect(older).toHaveAttribute("data-request-id", rejectedPlan.id);
  for (const [row, outcome, feedback] of [
    [newer, "approved", approvalNote],
    [older, "rejected", rejection],
  ] as const) {
    await expect(row).toContainText(outcome);
    await expect(row).toContainText(E2E_LEAD.email);
    await expect(row).toContainText(feedback);
  }
  await page.screenshot({ path: "test-results/screenshots/history.png", fullPage: true });

  await history.filterBy("Status", "approved");
  await expect(page).toHaveURL(/[?&]status=approved/);
  await expect(history.rows()).toHaveCount(1);
  await expect(history.row(approvedPlan.id)).toBeVisible();
  await expect(history.row(rejectedPlan.id)).toHaveCount(0);

  // The URL carries the filters: a reload shows the same narrowed list.
  await page.reload();
  await expect(history.filter("Status")).toHaveValue("approved");
  await expect(history.filter("Agent")).toHaveValue(name);
  await expect(history.rows()).toHaveCount(1);

  await history.filterBy("Status", "rejected");
  await expect(history.rows()).toHaveCount(1);
  await expect(history.row(rejectedPlan.id)).toBeVisible();

  await history.row(rejectedPlan.id).getByRole("link", { name }).click();
  const timeline = new AgentTimelinePage(page);
  await timeline.expectVisible(name);
  const blocked = timeline.entry("Tool call blocked: write_file");
  await expect(blocked).toHaveCount(1);
  await expect(blocked).toContainText("PLAN_GATE_BLOCKED");
  await expect(blocked).toContainText("a plan must be approved first");
  await expect(timeline.entry(`Plan rejected by ${E2E_LEAD.email}`)).toContainText(rejection);
  await expect(timeline.entry(`Plan approved by ${E2E_LEAD.email}`)).toContainText(approvalNote);
  await page.screenshot({ path: "test-results/screenshots/agent-timeline.png", fullPage: true });

  await lead.post(`/api/v1/agents/${name}/force-stop`);
  await lead.dispose();
  await page.context().close();
});
