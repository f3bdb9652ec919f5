import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { SESSION_KEY_STORAGE_NAME } from "../lib/shared/auth/session-key";
import { BoardPage } from "./pages/board-page";
import { InboxPage } from "./pages/inbox-page";
import { SignInPage } from "./pages/sign-in-page";
import { humanApi, registerApiAgent } from "./support/api";
import { E2E_BASE_URL, E2E_LEAD } from "./support/accounts";
import { closeSignedInPages, sessionHeadersOf, signedInPage } from "./support/sign-in";

test.afterEach(closeSignedInPages);

test("pages carry a nonce-based CSP that the console runs under without a single violation, live socket included", async ({
  browser,
}) => {
  const violations: string[] = [];
  const { page, inbox } = await signedInPage(browser, undefined, {
    prepare: async (target) => {
      target.on("console", (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) {
          violations.push(message.text());
        }
      });
    },
  });
  await inbox.expectLive();
  await page.getByRole("link", { name: "Team" }).click();
  await expect(page).toHaveURL(/\/team$/);
  await page.getByRole("link", { name: "History" }).click();
  await expect(page).toHaveURL(/\/history/);
  // Loaded from the server, the board's grid and table once carried `style` attributes, which
  // the policy refuses: a row of the table stood 57 px high instead of 48.
  const { name } = await registerApiAgent(await humanApi(), { requirePlan: false });
  // Searched for, so the suite's thousand-agent board does not scroll it out of sight.
  const board = new BoardPage(page);
  await board.goto(`view=cards&q=${name}`);
  await expect(page.getByRole("link", { name, exact: true }).first()).toBeVisible();
  await board.goto(`view=table&q=${name}`);
  await expect(board.row(name)).toBeVisible();
  expect(await board.row(name).evaluate((row) => row.getBoundingClientRect().height)).toBe(48);
  // The page names its icon, which is served (a browser asked /favicon.ico, a 404, before).
  const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect((await page.request.get(icon ?? "/favicon.ico")).status()).toBe(200);

  const response = await page.request.get("/");
  const policy = response.headers()["content-security-policy"] ?? "";
  const nonce = /'nonce-([^']+)'/.exec(policy)?.[1];
  expect(nonce).toBeTruthy();
  expect(policy).toContain("frame-ancestors 'none'");
  expect(response.headers()["x-content-type-options"]).toBe("nosniff");
  expect(response.headers()["referrer-policy"]).toBe("same-origin");
  const html = await response.text();
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((match) => match[0]);
  expect(scripts.length).toBeGreaterThan(0);
  for (const script of scripts) expect(script).toContain(`nonce="${nonce}"`);
  expect(violations).toEqual([]);
});

test("a page on another origin cannot frame the console", async ({ browser }) => {
  const { page } = await signedInPage(browser);
  // setContent waits for the page's load event, which waits for the frame's attempt.
  await page.setContent(`<iframe src="${E2E_BASE_URL}/"></iframe>`, { waitUntil: "load" });
  const frames = page.frames().filter((frame) => frame !== page.mainFrame());
  expect(frames).toHaveLength(1);
  const isInboxShown = await frames[0]
    ?.getByRole("heading", { name: "Approval inbox" })
    .isVisible()
    .catch(() => false);
  expect(isInboxShown).toBe(false);
});

test("signing out in one tab ends the console in another within seconds", async ({ browser }) => {
  const { page: first, inbox } = await signedInPage(browser);
  const second = await first.context().newPage();
  await second.goto("/team");
  await expect(second.getByRole("status", { name: "Connection: Live" })).toBeVisible();
  const sessionHeaders = await sessionHeadersOf(second);
  expect((await second.request.get("/api/v1/agents", { headers: sessionHeaders })).status()).toBe(
    200,
  );
  await inbox.signOut();
  await expect(second).toHaveURL(/\/sign-in/, { timeout: 10_000 });
  // The API agrees: the cookie the tabs shared is dead.
  const lead = await humanApi();
  expect((await lead.get("/api/v1/agents")).status()).toBe(200);
  expect((await second.request.get("/api/v1/agents", { headers: sessionHeaders })).status()).toBe(
    401,
  );
});

test("a server on another port of the host receives the Lead's cookie, and can do nothing with it", async ({
  browser,
}) => {
  // Red team, round ten: browsers send a host's cookies to all of its ports. Such a server (an
  // agent's dev preview the Lead opens, say) replayed the cookie and minted an admin token.
  const caught: string[] = [];
  const preview = createServer((request, response) => {
    caught.push(request.headers.cookie ?? "");
    response.writeHead(200, { "content-type": "text/html" }).end("<p>a preview</p>");
  });
  await new Promise<void>((resolve) => preview.listen(0, "127.0.0.1", resolve));
  try {
    const { page } = await signedInPage(browser);
    const { port } = preview.address() as AddressInfo;
    await page.goto(`http://127.0.0.1:${port}/`);
    const cookie = caught.find((header) => header.includes("session_token"));
    expect(cookie, "the browser sent the console's cookie to the other port").toBeDefined();

    const name = `caught-${Date.now()}`;
    const minted = await fetch(`${E2E_BASE_URL}/api/v1/tokens`, {
      method: "POST",
      headers: { cookie: cookie ?? "", origin: E2E_BASE_URL, "content-type": "application/json" },
      body: JSON.stringify({ name, scope: "admin" }),
    });
    expect(minted.status).toBe(401);
    const lead = await humanApi();
    const tokens = (await (await lead.get("/api/v1/tokens")).json()) as {
      items: { name: string }[];
    };
    expect(tokens.items.map((token) => token.name)).not.toContain(name);
    await lead.dispose();
  } finally {
    await new Promise<void>((resolve) => preview.close(() => resolve()));
  }
});

test("a console without its session key, or with another session's, goes to sign in and stays there", async ({
  browser,
}) => {
  // Decision 080: the cookie still renders the page, but no call of it counts without the key.
  const { page } = await signedInPage(browser);
  const storedKey = () =>
    page.evaluate((name) => window.localStorage.getItem(name), SESSION_KEY_STORAGE_NAME);
  const signInHeading = page.getByRole("heading", { name: "Sign in to Handshake" });

  await page.evaluate((name) => window.localStorage.removeItem(name), SESSION_KEY_STORAGE_NAME);
  await page.goto("/team");
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(signInHeading).toBeVisible();
  // The cookie is live, but with no key here the sign-in page keeps its form: no loop.
  await page.waitForTimeout(1_000);
  await expect(page).toHaveURL(/\/sign-in$/);

  await new SignInPage(page).signIn(E2E_LEAD.email, E2E_LEAD.password);
  await new InboxPage(page).expectVisible();
  expect(await storedKey()).not.toBeNull();

  // A key that is not this cookie's (a cookie tossed by another port): the first refused call
  // forgets it and sends the console to sign in.
  await page.evaluate(
    (name) => window.localStorage.setItem(name, "x".repeat(43)),
    SESSION_KEY_STORAGE_NAME,
  );
  await page.goto("/team");
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(signInHeading).toBeVisible();
  expect(await storedKey()).toBeNull();
});
