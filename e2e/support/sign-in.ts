import type { Browser, BrowserContext, Page } from "@playwright/test";
import { InboxPage } from "../pages/inbox-page";
import { SignInPage } from "../pages/sign-in-page";
import { SESSION_KEY_HEADER, SESSION_KEY_STORAGE_NAME } from "../../lib/shared/auth/session-key";
import { E2E_LEAD } from "./accounts";

const openContexts = new Set<BrowserContext>();

/** Closes the contexts `signedInPage` opened, so no console (and its socket) outlives its test. */
export async function closeSignedInPages(): Promise<void> {
  await Promise.all([...openContexts].map((context) => context.close()));
  openContexts.clear();
}

/** A fresh browser context signed in through the real sign-in page, on the inbox. */
export async function signedInPage(
  browser: Browser,
  credentials = E2E_LEAD,
  options: { isLive?: boolean; prepare?: (page: Page) => Promise<void> } = {},
): Promise<{ page: Page; inbox: InboxPage }> {
  const context = await browser.newContext();
  openContexts.add(context);
  const page = await context.newPage();
  await options.prepare?.(page);
  const signIn = new SignInPage(page);
  await signIn.goto();
  await signIn.signIn(credentials.email, credentials.password);
  const inbox = new InboxPage(page);
  await inbox.expectVisible();
  if (options.isLive ?? true) await inbox.expectLive();
  return { page, inbox };
}

/**
 * The headers a call of this page's session carries beside its cookie: the key the sign-in page
 * stored in the origin's localStorage (decision 080). Without it the cookie is no caller at all.
 */
export async function sessionHeadersOf(page: Page): Promise<Record<string, string>> {
  const key = await page.evaluate(
    (name) => window.localStorage.getItem(name),
    SESSION_KEY_STORAGE_NAME,
  );
  if (key === null) throw new Error("the page holds no session key: was it signed in?");
  return { [SESSION_KEY_HEADER]: key };
}
