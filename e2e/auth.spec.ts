import { expect, test } from "@playwright/test";
import { InboxPage } from "./pages/inbox-page";
import { SignInPage } from "./pages/sign-in-page";
import { E2E_LEAD } from "./support/accounts";

test("an anonymous visitor is sent to sign-in", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(page.getByRole("heading", { name: "Sign in to Handshake" })).toBeVisible();
});

test("an anonymous API call gets 401 with the JSON error shape", async ({ request }) => {
  const response = await request.post("/api/v1/users", {
    data: { email: "x@example.com", password: "long-enough-pass", role: "viewer" },
  });
  expect(response.status()).toBe(401);
  expect(await response.json()).toEqual({
    error: { code: "UNAUTHENTICATED", message: expect.any(String) },
  });
});

test("the Lead signs in through the page and sees the empty inbox", async ({ page }) => {
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn(E2E_LEAD.email, E2E_LEAD.password);
  const inbox = new InboxPage(page);
  await inbox.expectVisible();
  await inbox.expectEmpty();
  await page.screenshot({ path: "test-results/screenshots/inbox-empty.png" });

  await inbox.signOut();
  await expect(page).toHaveURL(/\/sign-in$/);
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in$/);
});

test("a wrong password is refused on the page", async ({ page }) => {
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn(E2E_LEAD.email, "not-the-password");
  await signIn.expectError(/email or password is incorrect/);
  await expect(page).toHaveURL(/\/sign-in$/);
});

test("a method a route does not have gets 405 with the JSON error shape", async ({ request }) => {
  const response = await request.delete("/api/v1/requests");
  expect(response.status()).toBe(405);
  expect(response.headers()["allow"]).toBe("GET, POST");
  expect(await response.json()).toEqual({
    error: { code: "METHOD_NOT_ALLOWED", message: expect.stringContaining("DELETE") },
  });
});

test("health reports the database", async ({ request }) => {
  const response = await request.get("/api/v1/health");
  expect(await response.json()).toEqual({ ok: true, db: "up" });
});
