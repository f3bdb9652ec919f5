import { expect, test, type APIRequestContext } from "@playwright/test";
import { TeamPage } from "./pages/team-page";
import { createHuman, humanApi, registerApiAgent, uniqueAgentName } from "./support/api";
import { sessionHeadersOf, signedInPage } from "./support/sign-in";

type PendingRequest = { id: string; type: string };
type TimelinePage = { items: { kind: string; change?: { status: string | null } }[] };

/**
 * The statuses the agent went through, oldest first, from its timeline. The board applies live
 * events in batches, so a status that lasted a few milliseconds may never be painted: the order
 * is read where it is recorded.
 */
async function statusHistory(lead: APIRequestContext, name: string): Promise<string[]> {
  const response = await lead.get(`/api/v1/agents/${name}/timeline?limit=200`);
  expect(response.status(), await response.text()).toBe(200);
  const { items } = (await response.json()) as TimelinePage;
  return items
    .flatMap((item) => (item.kind === "status" && item.change?.status ? [item.change.status] : []))
    .reverse();
}

test("the Lead spawns a planning teammate, it is approved through the API and shut down from the board", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const name = uniqueAgentName("e2e-team");
  const { page } = await signedInPage(browser);
  const team = new TeamPage(page);
  await team.goto({ search: name });
  const lead = await humanApi();

  await team.spawnTeammate({
    name,
    role: "e2e writer",
    requirePlan: true,
    script: "write-after-approval",
  });
  await expect(team.card(name)).toBeVisible();

  // It starts working, is blocked by the plan gate, submits its plan and waits.
  await team.expectStatus(name, "waiting_approval", { timeout: 20_000 });
  const beforeApproval = await statusHistory(lead, name);
  expect(beforeApproval).toContain("working");
  expect(beforeApproval.indexOf("working")).toBeLessThan(
    beforeApproval.lastIndexOf("waiting_approval"),
  );
  const plan = team.pendingRequests(name);
  await expect(plan).toHaveCount(1);
  await expect(plan).toContainText("Plan awaiting you");
  await expect(plan).toContainText(/auto-rejects in 1?\d:\d\d/);
  const countdown = await plan.textContent();
  await expect(plan).not.toHaveText(countdown ?? "", { timeout: 3_000 });
  await expect(team.fact(name, "Blocked tool attempts")).toHaveText("1");
  await expect(team.fact(name, "Tools")).toHaveText("sandboxed");
  await expect(team.fact(name, "Blocked on Lead")).toHaveText(/^\d+:\d\d$/);
  await page.screenshot({ path: "test-results/screenshots/team.png", fullPage: true });

  const detail = await lead.get(`/api/v1/agents/${name}`);
  const pending = ((await detail.json()) as { pendingRequests: PendingRequest[] }).pendingRequests;
  const planRequest = pending.find((request) => request.type === "plan_approval");
  expect(planRequest, JSON.stringify(pending)).toBeDefined();
  const approval = await lead.post(`/api/v1/requests/${planRequest?.id}/responses`, {
    data: { type: "plan_approval_response", approve: true, feedback: "go ahead" },
  });
  expect(approval.status(), await approval.text()).toBe(200);

  await expect
    .poll(async () => {
      const history = await statusHistory(lead, name);
      return history.slice(history.indexOf("waiting_approval") + 1);
    })
    .toContain("working");
  await expect(plan).toHaveCount(0);
  await expect(team.fact(name, "Blocked on Lead")).toHaveText("not blocked");

  await team.requestShutdown(name, "the e2e run is over");
  await team.expectStatus(name, "shutdown", { timeout: 20_000 });
  await expect(team.card(name).getByRole("button", { name: `Respawn ${name}` })).toBeVisible();
  await lead.dispose();
  await page.context().close();
});

test("the API's refusal of a spawn is shown in the dialog", async ({ browser }) => {
  const lead = await humanApi();
  const { name } = await registerApiAgent(lead, { name: uniqueAgentName("e2e-taken") });
  const { page } = await signedInPage(browser);
  const team = new TeamPage(page);
  await team.goto({ search: name });

  const dialog = await team.openSpawnDialog();
  await team.fillSpawnForm(dialog, {
    name,
    role: "duplicate",
    requirePlan: false,
    script: "careful-planner",
  });
  await expect(dialog.getByRole("alert")).toContainText(
    `agent '${name}' is still running (starting); stop it before starting it again`,
  );
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await lead.dispose();
  await page.context().close();
});

test("a viewer sees the board without any action, and the API refuses a forced one", async ({
  browser,
}) => {
  const lead = await humanApi();
  const { name } = await registerApiAgent(lead, { name: uniqueAgentName("e2e-watched") });
  const viewer = await createHuman(lead, "viewer");

  const { page } = await signedInPage(browser, viewer);
  const team = new TeamPage(page);
  await team.goto({ search: name });
  await expect(team.card(name)).toBeVisible();
  await expect(team.status(name)).toBeVisible();
  await expect(team.actionButtons()).toHaveCount(0);
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(team.card(name)).toBeVisible();
  await page.screenshot({ path: "test-results/screenshots/team-390.png", fullPage: true });

  const forced = await page.request.post(`/api/v1/agents/${name}/force-stop`, {
    headers: await sessionHeadersOf(page),
  });
  expect(forced.status()).toBe(403);
  expect(((await forced.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
  const after = await lead.get(`/api/v1/agents/${name}`);
  expect(((await after.json()) as { status: string }).status).not.toBe("shutdown");
  await lead.dispose();
  await page.context().close();
});
