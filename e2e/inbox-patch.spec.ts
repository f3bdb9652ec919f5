import { expect, test } from "@playwright/test";
import { humanApi, registerApiAgent, submitPlan } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

test.afterEach(closeSignedInPages);

test("events patch the inbox in place: a new request, a decision elsewhere and the Lead's own click never refetch the pending list", async ({
  browser,
}) => {
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const first = await registerApiAgent(lead);
  const second = await registerApiAgent(lead);
  const firstId = await submitPlan(first.api, "plan decided by another Lead");
  await expect(inbox.requestItem(first.name)).toBeVisible();
  // Counting sees only fetches issued from here on: the page's own first reads (at load and on
  // connecting) were issued before. Not "networkidle": the console's socket keeps the network busy.

  const listFetches: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname === "/api/v1/requests" && request.method() === "GET") {
      listFetches.push(url.search);
    }
  });

  await submitPlan(second.api, "plan approved with a click");
  await expect(inbox.requestItem(second.name)).toBeVisible();

  const decided = await lead.post(`/api/v1/requests/${firstId}/responses`, {
    data: { type: "plan_approval_response", approve: true },
  });
  expect(decided.status()).toBe(200);
  await expect(inbox.requestItem(first.name)).toContainText("approved");

  await inbox.select(second.name);
  await inbox.approve();
  await inbox.expectDecided(/approved by lead@e2e\.test/);
  await expect(inbox.requestItem(second.name)).toContainText("approved");

  await page.getByRole("button", { name: "Clear decided requests" }).click();
  await expect(inbox.requestItem(first.name)).toHaveCount(0);
  await expect(inbox.requestItem(second.name)).toHaveCount(0);
  expect(listFetches).toEqual([]);
});

test("a new request's row comes with its event on the socket: the inbox shows it without fetching it", async ({
  browser,
}) => {
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  const rowFetches: string[] = [];
  page.on("request", (request) => {
    const { pathname } = new URL(request.url());
    if (/^\/api\/v1\/requests\/req_[0-9a-f]+$/.test(pathname) && request.method() === "GET") {
      rowFetches.push(pathname);
    }
  });

  const id = await submitPlan(agent.api, "plan whose row rides the socket");
  await expect(inbox.requestItem(agent.name)).toBeVisible();
  await inbox.select(agent.name);
  await expect(page.getByRole("article")).toContainText("plan whose row rides the socket");
  expect(rowFetches.filter((path) => path === `/api/v1/requests/${id}`)).toEqual([]);
});
