import { expect, test, type APIRequestContext } from "@playwright/test";
import { E2E_LEAD } from "./support/accounts";
import {
  createHuman,
  humanApi,
  registerApiAgent,
  submitPlan,
  uniqueAgentName,
} from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

test.afterEach(closeSignedInPages);

type TimelineItem = {
  kind: string;
  toolCall?: { tool: string; args: { command?: string }; isAllowed: boolean };
};

async function allowedCommands(lead: APIRequestContext, name: string): Promise<string[]> {
  const response = await lead.get(`/api/v1/agents/${name}/timeline?limit=200`);
  const { items } = (await response.json()) as { items: TimelineItem[] };
  return items
    .flatMap(({ toolCall }) =>
      toolCall?.tool === "bash" && toolCall.isAllowed ? [toolCall.args.command ?? ""] : [],
    )
    .sort();
}

test("bulk-approve three risky calls from one worker: each decided on its own, the worker runs all three", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const name = uniqueAgentName("e2e-bulk");
  const lead = await humanApi();
  const spawned = await lead.post("/api/v1/agents", {
    data: {
      name,
      role: "e2e cleaner",
      requirePlan: false,
      worker: { model: "scripted", script: "test-three-risky" },
    },
  });
  expect(spawned.status(), await spawned.text()).toBe(201);

  const { page, inbox } = await signedInPage(browser);
  const items = page
    .getByRole("list", { name: "Pending requests" })
    .getByRole("button", { name: `Risky tool call from ${name}` });
  await expect(items).toHaveCount(3, { timeout: 30_000 });
  await expect(items.first()).toContainText("risk: needs approval");

  // Keyboard: select the first card, tick it with x; then "Select all from" takes the rest.
  await items.first().click();
  await page.keyboard.press("x");
  const bar = page.getByRole("region", { name: "Bulk decision" });
  await expect(bar).toContainText("1 selected");
  await page.keyboard.press("x");
  await expect(bar).toContainText("0 selected");

  // Shift-click ticks the range from the last box touched.
  const boxes = page.getByRole("checkbox", { name: `Select risky tool call from ${name}` });
  await boxes.nth(0).click();
  await boxes.nth(2).click({ modifiers: ["Shift"] });
  await expect(bar).toContainText("3 selected");
  await expect(boxes.nth(1)).toBeChecked();
  await boxes.nth(1).click();
  await expect(bar).toContainText("2 selected");
  await bar.getByRole("button", { name: `Select all from ${name}` }).click();
  await expect(bar).toContainText("3 selected");

  await expect(bar.getByRole("button", { name: "Reject 3" })).toBeDisabled();
  await bar.getByLabel("Feedback for the selected requests").fill("clean them all");
  await bar.getByRole("button", { name: "Approve 3" }).click();
  await expect(bar.getByRole("status")).toHaveText("3 approved");
  await expect(inbox.requestItem(name, "Risky tool call").first()).toContainText("approved");

  // Each request has its own decision by this Lead, with the shared feedback.
  const history = await lead.get(`/api/v1/requests?agent=${name}&status=approved`);
  const decided = (
    (await history.json()) as {
      items: { feedback: string; respondedBy: string; decidedBy: { kind: string } }[];
    }
  ).items;
  expect(decided).toHaveLength(3);
  for (const request of decided) {
    expect(request).toMatchObject({
      feedback: "clean them all",
      respondedBy: E2E_LEAD.email,
      decidedBy: { kind: "human" },
    });
  }
  // The worker ran each approved call once more, and each was allowed by its own approval.
  await expect
    .poll(() => allowedCommands(lead, name), { timeout: 30_000 })
    .toEqual(["rm -rf out-1", "rm -rf out-2", "rm -rf out-3"]);
  await page.screenshot({ path: "test-results/screenshots/bulk.png" });
  await lead.dispose();
});

test("the Lead extends a card's countdown, and two Leads see each other on the same card", async ({
  browser,
}) => {
  const lead = await humanApi();
  const second = await createHuman(lead, "lead");
  const agent = await registerApiAgent(lead);
  await submitPlan(agent.api, "plan that needs a longer look");

  const first = await signedInPage(browser);
  await first.inbox.select(agent.name);
  await expect(first.inbox.detail()).toContainText(/auto-rejects in 1[45]:\d\d/);
  await first.inbox.detail().getByLabel("More time").selectOption({ label: "1 hour" });
  await first.inbox.detail().getByRole("button", { name: "Extend deadline" }).click();
  await expect(first.inbox.detail()).toContainText(/auto-rejects in 1:1[45]:\d\d/);
  await expect(
    first.inbox.requestItem(agent.name).getByText(/auto-rejects in 1:1[45]:\d\d/),
  ).toBeVisible();

  const other = await signedInPage(browser, second);
  await other.inbox.select(agent.name);
  await expect(first.inbox.detail()).toContainText(`Also open by ${second.email}`);
  await expect(other.inbox.detail()).toContainText(`Also open by ${E2E_LEAD.email}`);
  await other.page.close();
  await expect(first.inbox.detail().getByText("Also open by")).toHaveCount(0);
  await lead.dispose();
});
