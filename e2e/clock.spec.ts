import { expect, test } from "@playwright/test";
import { humanApi, registerApiAgent, submitPlan } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";
import { installSkewedDate } from "../tests/support/skewed-date.mjs";

// A Lead's computer whose clock is two hours ahead, as one set by hand to the wrong zone is. The
// console counts down and sets rules' ends by the server's clock (decision 084): by the computer's,
// every card read "0:00", a rule with an hour to run read "expired", and a rule "for 30 minutes"
// lasted two and a half hours.
const SKEW_MS = 2 * 60 * 60_000;

test.afterEach(closeSignedInPages);

test("a Lead whose computer's clock is two hours ahead sees true countdowns and sets rules' true ends", async ({
  browser,
}) => {
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  await submitPlan(agent.api, "plan read on a computer with its clock ahead");
  const pattern = `bash(echo ${agent.name})`;
  const created = await lead.post("/api/v1/rules", {
    data: {
      pattern,
      effect: "allow",
      scope: { kind: "agent", agent: agent.name },
      expiresAt: new Date(Date.now() + 60 * 60_000).toISOString(),
    },
  });
  expect(created.status(), await created.text()).toBe(201);
  const ruleId = ((await created.json()) as { id: string }).id;

  const { page, inbox } = await signedInPage(browser, undefined, {
    prepare: async (skewed) => {
      await skewed.addInitScript(installSkewedDate, SKEW_MS);
    },
  });
  // The page's own clock is off, as the computer's would be.
  expect(
    await page.evaluate(() => Date.now() - performance.timeOrigin - performance.now()),
  ).toBeGreaterThan(SKEW_MS - 60_000);
  await inbox.select(agent.name);
  // The plan's default deadline is 15 minutes away.
  await expect(inbox.detail()).toContainText(/auto-rejects in 1[45]:\d\d/);

  await page.goto("/rules");
  const row = page.locator(`tr[data-rule-pattern="${pattern}"]`);
  await expect(row.getByTestId("rule-expiry")).toContainText("until");
  await row
    .getByRole("combobox", { name: /^New expiry of/ })
    .selectOption({ label: "for 30 minutes" });
  await expect
    .poll(
      async () => {
        const response = await lead.get("/api/v1/rules");
        const { items } = (await response.json()) as { items: { id: string; expiresAt: string }[] };
        const expiresAt = items.find((rule) => rule.id === ruleId)?.expiresAt ?? "";
        return Math.round((Date.parse(expiresAt) - Date.now()) / 60_000);
      },
      { timeout: 10_000 },
    )
    .toBe(30);

  await lead.delete(`/api/v1/rules/${ruleId}`);
  await lead.dispose();
  await agent.api.dispose();
});
