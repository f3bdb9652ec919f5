import { expect, test } from "@playwright/test";
import { SettingsPage } from "./pages/settings-page";
import { agentApi, createHuman, humanApi, uniqueAgentName } from "./support/api";
import { expectNoSidewaysScroll } from "./support/layout";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

test.afterEach(closeSignedInPages);

test("a Lead creates a token, sees it listed, revokes it, and the API then refuses it with 401", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser, undefined, { isLive: false });
  const settings = new SettingsPage(page);
  await settings.open();
  // The button waits for a name, and the field says why.
  await expect(page.getByRole("button", { name: "Create token" })).toBeDisabled();
  await expect(page.getByLabel("Name", { exact: true })).toHaveAccessibleDescription(
    /Name it to create it/,
  );

  const name = uniqueAgentName("ci-bot");
  const secret = await settings.createToken(name, "decide");
  const row = settings.row(name);
  await expect(row).toContainText("decide");
  await expect(row.getByTestId("token-status")).toHaveText("Active");
  await expectNoSidewaysScroll(page);

  const client = await agentApi(secret);
  expect((await client.get("/api/v1/requests")).status()).toBe(200);
  const refused = await client.post("/api/v1/users", {
    data: { email: `${name}@e2e.test`, password: "long-enough-pass", role: "lead" },
  });
  expect(refused.status()).toBe(403);

  await settings.revoke(name);
  await expect(row.getByTestId("token-status")).toContainText("Revoked");
  await expect(row.getByRole("button", { name: `Revoke ${name}` })).toHaveCount(0);
  const after = await client.get("/api/v1/requests");
  expect(after.status()).toBe(401);
  await client.dispose();
});

test("a viewer can create only read tokens and sees only their own", async ({ browser }) => {
  const lead = await humanApi();
  const leadTokenName = uniqueAgentName("lead-only");
  expect(
    (await lead.post("/api/v1/tokens", { data: { name: leadTokenName, scope: "read" } })).status(),
  ).toBe(201);
  const viewer = await createHuman(lead, "viewer");
  await lead.dispose();

  const { page } = await signedInPage(browser, viewer, { isLive: false });
  const settings = new SettingsPage(page);
  await settings.open();
  await expect(settings.scopeSelect().locator("option")).toHaveText(["read"]);
  const name = uniqueAgentName("viewer-bot");
  await settings.createToken(name, "read");
  await expect(settings.row(name)).toBeVisible();
  await expect(settings.row(leadTokenName)).toHaveCount(0);
  await expect(settings.rows()).toHaveCount(1);
});
