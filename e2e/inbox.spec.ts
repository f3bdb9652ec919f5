import { expect, test } from "@playwright/test";
import { createHuman, humanApi, registerApiAgent, submitPlan } from "./support/api";
import { expectNoSidewaysScroll } from "./support/layout";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

test.afterEach(closeSignedInPages);

test("a request from the agent API appears without reload, is approved with feedback, and opens the agent's gate", async ({
  browser,
}) => {
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);

  await submitPlan(
    agent.api,
    "## Plan\n1. Add **tests** for the parser's edge cases\n2. Fix the off-by-one in `tokenize()`\n3. Run `npm test` and report back\n\nTouches only `src/parser/`.",
  );
  await expect(inbox.requestItem(agent.name)).toBeVisible();
  // A filter that matches nothing says so, rather than leaving an empty list.
  const filter = page.getByLabel("Filter requests");
  await filter.fill("no-such-agent-zzz");
  await expect(page.getByRole("status").filter({ hasText: "No request matches" })).toBeVisible();
  await filter.fill("");
  await inbox.select(agent.name);
  await expect(inbox.detail().getByRole("strong")).toHaveText("tests");
  await expect(inbox.detail()).toContainText(/auto-rejects in \d+:\d\d/);
  await expect(inbox.detail().getByRole("region", { name: "Recent activity" })).toBeVisible();
  await expect(page).toHaveTitle(/^\(\d+\) Inbox/);
  await page.screenshot({ path: "test-results/screenshots/inbox.png" });

  await inbox.approve("looks good, keep it small");
  await inbox.expectDecided(/approved by lead@e2e\.test .*looks good, keep it small/);
  const me = await (await agent.api.get("/api/v1/me")).json();
  expect(me).toMatchObject({ gate: "approved" });
});

test("rejecting requires feedback, and the feedback reaches the agent", async ({ browser }) => {
  const { inbox } = await signedInPage(browser);
  const agent = await registerApiAgent(await humanApi());
  const requestId = await submitPlan(agent.api, "delete everything and start over");
  await inbox.select(agent.name);

  await inbox.detail().getByRole("button", { name: "Reject" }).click();
  await expect(inbox.detail().getByRole("alert")).toHaveText(/Feedback is required to reject/);
  await inbox.reject("too risky: keep the history");
  await inbox.expectDecided(/rejected by lead@e2e\.test/);

  const messages = (await (await agent.api.get("/api/v1/inbox")).json()).messages as {
    type: string;
    content: string;
    metadata: { requestId: string };
  }[];
  expect(messages).toContainEqual(
    expect.objectContaining({
      type: "plan_approval_response",
      content: "too risky: keep the history",
      metadata: expect.objectContaining({ requestId }),
    }),
  );
});

test("two Leads: a decision updates the other's view in place, and a stale click is refused with the winner shown", async ({
  browser,
}) => {
  const lead = await humanApi();
  const second = await createHuman(lead, "lead");
  const first = await signedInPage(browser);
  const other = await signedInPage(browser, second);

  const agent = await registerApiAgent(lead);
  await submitPlan(agent.api, "plan for two leads");
  await first.inbox.select(agent.name);
  await other.inbox.select(agent.name);
  await first.inbox.approve("first!");
  await other.inbox.expectDecided(/approved by lead@e2e\.test/);
  await expect(other.inbox.detail().getByRole("button", { name: "Approve" })).toHaveCount(0);

  // A console whose live updates are cut off still shows the request as pending; its click must lose.
  const racer = await registerApiAgent(lead);
  await submitPlan(racer.api, "plan decided while the other console is not listening");
  const stale = await signedInPage(browser, second, {
    isLive: false,
    prepare: (page) => page.routeWebSocket(/socket\.io/, (socket) => socket.close()),
  });
  await stale.inbox.select(racer.name);
  await first.inbox.select(racer.name);
  await first.inbox.approve("I was faster");
  await first.inbox.expectDecided(/approved/);
  await stale.inbox.approve();
  await expect(stale.inbox.detail().getByRole("status")).toContainText(
    "Someone else decided first.",
  );
  await stale.inbox.expectDecided(/approved by lead@e2e\.test .*I was faster/);
});

test("a click after the deadline shows the request expired in place, not as someone else's", async ({
  browser,
}) => {
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  const asked = await agent.api.post("/api/v1/requests", {
    data: {
      type: "plan_approval",
      payload: { plan: "a plan with five seconds" },
      timeoutSeconds: 5,
    },
  });
  expect(asked.status(), await asked.text()).toBe(201);
  // Its live updates cut off, the console still shows the request pending past its deadline.
  const stale = await signedInPage(browser, undefined, {
    isLive: false,
    prepare: (page) => page.routeWebSocket(/socket\.io/, (socket) => socket.close()),
  });
  await stale.inbox.select(agent.name);
  await stale.page.waitForTimeout(6_000);
  await stale.inbox.approve();
  await stale.inbox.expectDecided(/expired/);
  await expect(stale.inbox.detail().getByRole("status")).not.toContainText(
    "Someone else decided first.",
  );
});

test("keyboard only: j and k move, a approves, r focuses feedback and Enter rejects", async ({
  browser,
}) => {
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const first = await registerApiAgent(lead);
  const second = await registerApiAgent(lead);
  await submitPlan(first.api, "first plan");
  await submitPlan(second.api, "second plan");
  await expect(inbox.requestItem(second.name)).toBeVisible();

  await page.getByRole("list", { name: "Pending requests" }).getByRole("button").first().focus();
  await page.keyboard.press("Escape");
  await page.locator("body").focus();
  // Walk to the first agent's request, then approve it.
  for (let i = 0; i < 20; i++) {
    const heading = await inbox.detail().getByRole("heading").first().textContent();
    if (heading?.includes(first.name)) break;
    await page.keyboard.press("j");
  }
  await expect(
    inbox.detail().getByRole("heading", { name: `Plan from ${first.name}` }),
  ).toBeVisible();
  await page.keyboard.press("a");
  await inbox.expectDecided(/approved by/);
  expect((await (await first.api.get("/api/v1/me")).json()).gate).toBe("approved");

  await page.keyboard.press("j");
  await expect(
    inbox.detail().getByRole("heading", { name: `Plan from ${second.name}` }),
  ).toBeVisible();
  await page.keyboard.press("r");
  await expect(inbox.detail().getByLabel("Feedback")).toBeFocused();
  await page.keyboard.type("split it in two");
  await page.keyboard.press("Enter");
  await inbox.expectDecided(/rejected by .*split it in two/);
  expect((await (await second.api.get("/api/v1/me")).json()).gate).toBe("rejected");

  await page.keyboard.press("?");
  await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
});

test("the request the Lead opened is never swapped for another: replaced during a list fetch, it says so and `a` decides nothing", async ({
  browser,
}) => {
  // Red team: a plan replaced while the list was being fetched left the list unremembered, the
  // pane fell back to the first row (the replacement, "Plan from" the same agent), and `a`
  // approved a plan the Lead had not read.
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  await submitPlan(agent.api, "1. read the code");
  await inbox.select(agent.name);

  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let entered = () => {};
  const fetching = new Promise<void>((resolve) => (entered = resolve));
  await page.route(/\/api\/v1\/requests\?status=pending/, async (route) => {
    entered();
    await held;
    await route.continue();
  });
  // The list is fresh for 5 s after its last change (the console's staleTime); then the tab's
  // return (visibilitychange) fetches it again, as a Lead coming back from a terminal does.
  await page.waitForTimeout(5_500);
  await page.evaluate(() => window.dispatchEvent(new Event("visibilitychange")));
  await fetching;
  const replacement = await submitPlan(agent.api, "1. push to production");
  release();

  await expect(
    page.getByRole("status").filter({ hasText: "no longer in the inbox" }),
  ).toBeVisible();
  await expect(inbox.detail()).toHaveCount(0);
  await page.locator("body").focus();
  await page.keyboard.press("a");
  await inbox.select(agent.name);
  await expect(inbox.detail()).toContainText("push to production");
  const stored = await (await agent.api.get(`/api/v1/requests/${replacement}`)).json();
  expect(stored).toMatchObject({ status: "pending" });
  await page.unroute(/\/api\/v1\/requests\?status=pending/);
});

test("`r` on one card and a click on another: Enter in the second's feedback adds a line, it rejects nothing", async ({
  browser,
}) => {
  // Red team: rejecting mode outlived a click on another row, and Enter rejected that one.
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const [first, second] = [await registerApiAgent(lead), await registerApiAgent(lead)];
  await submitPlan(first.api, "first plan");
  const secondPlan = await submitPlan(second.api, "second plan");
  await inbox.select(first.name);
  await page.locator("body").focus();
  await page.keyboard.press("r");
  await expect(inbox.detail().getByLabel("Feedback")).toBeFocused();
  await inbox.select(second.name);
  await inbox.detail().getByLabel("Feedback").fill("a note");
  await inbox.detail().getByLabel("Feedback").press("Enter");
  await expect(inbox.detail().getByLabel("Feedback")).toHaveValue("a note\n");
  const stored = await (await second.api.get(`/api/v1/requests/${secondPlan}`)).json();
  expect(stored).toMatchObject({ status: "pending" });
});

test("after the socket drops, requests created meanwhile appear when it reconnects", async ({
  browser,
}) => {
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const agents = [await registerApiAgent(lead), await registerApiAgent(lead)];

  await page.context().setOffline(true);
  await expect(page.getByRole("status", { name: /Connection: Offline/ })).toBeVisible({
    timeout: 30_000,
  });
  for (const agent of agents)
    await submitPlan(agent.api, `plan while the console was offline (${agent.name})`);
  await page.context().setOffline(false);

  await inbox.expectLive();
  for (const agent of agents) await expect(inbox.requestItem(agent.name)).toBeVisible();
});

test("a viewer sees requests but no decision buttons, and the API refuses a forced decision", async ({
  browser,
}) => {
  const lead = await humanApi();
  const viewerCredentials = await createHuman(lead, "viewer");
  const agent = await registerApiAgent(lead);
  const requestId = await submitPlan(agent.api, "a plan the viewer can read");
  const { inbox } = await signedInPage(browser, viewerCredentials);
  await inbox.select(agent.name);
  await expect(inbox.detail()).toContainText("a plan the viewer can read");
  await expect(inbox.detail().getByRole("button", { name: /Approve|Reject/ })).toHaveCount(0);

  const viewer = await humanApi(viewerCredentials);
  const forced = await viewer.post(`/api/v1/requests/${requestId}/responses`, {
    data: { type: "plan_approval_response", approve: true },
  });
  expect(forced.status()).toBe(403);
});

test("the inbox works at 390 px wide without sideways scrolling", async ({ browser }) => {
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  await submitPlan(
    agent.api,
    "## Narrow plan\n1. A step with a `long_identifier_that_might_overflow_the_layout()`",
  );
  const { page, inbox } = await signedInPage(browser);
  await page.setViewportSize({ width: 390, height: 844 });
  await inbox.select(agent.name);
  await expect(inbox.detail().getByRole("button", { name: "Approve" })).toBeVisible();
  await expectNoSidewaysScroll(page);
  await page.screenshot({ path: "test-results/screenshots/inbox-390.png", fullPage: true });
});

test("the notifications toggle follows the browser's permission, granted while the inbox is open", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  await expect(page.getByRole("button", { name: "Enable notifications" })).toBeVisible();

  await page.context().grantPermissions(["notifications"], { origin: new URL(page.url()).origin });
  await expect(page.getByText("Notifications on")).toBeVisible();
  await expect(page.getByRole("button", { name: "Enable notifications" })).toHaveCount(0);
});

test("the inbox asks the browser for the notification permission once, not on each render", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser, undefined, {
    // In Chromium each read is a call to the browser process; the inbox renders once a second.
    prepare: async (target) => {
      await target.addInitScript(() => {
        const read = Object.getOwnPropertyDescriptor(Notification, "permission")?.get;
        const counter = window as unknown as { permissionReads: number };
        counter.permissionReads = 0;
        Object.defineProperty(Notification, "permission", {
          get() {
            counter.permissionReads += 1;
            return read?.call(this) as NotificationPermission;
          },
        });
      });
    },
  });
  await expect(page.getByRole("button", { name: "Enable notifications" })).toBeVisible();
  // Settled: hydrated, subscribed, and read again once subscribed.
  await page.waitForTimeout(1_000);
  const readsShown = await page.evaluate(
    () => (window as unknown as { permissionReads: number }).permissionReads,
  );
  // Three of the inbox's one-second ticks.
  await page.waitForTimeout(3_500);
  const readsAfter = await page.evaluate(
    () => (window as unknown as { permissionReads: number }).permissionReads,
  );
  expect(readsShown).toBeGreaterThan(0);
  expect(readsAfter).toBe(readsShown);
});
