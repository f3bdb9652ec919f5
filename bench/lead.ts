import { existsSync } from "node:fs";
import { chromium, type Page } from "@playwright/test";
import { env } from "../lib/env";
import type { RequestView } from "../lib/requests/views";
import { callApi, signedInBrowserContext, type Agent, type BenchSession } from "./clients";
import { median, sleep } from "./stats";

/**
 * G3.6, what the Lead feels, in a real Chromium on the production inbox. Every time is read from
 * one clock, the bench's (`performance.now()` in Node): the page reports a moment by calling an
 * exposed binding, which CDP pushes to Node at once, so no browser timestamp is ever compared with
 * a Node one. The binding's one-way trip (page → Node) is part of each figure; `hopMs` estimates
 * it as half an empty `page.evaluate` round trip.
 */
export type LeadSamples = {
  /** Agent's POST /requests returned (committed) → its row in the DOM and its frame started. */
  rowVisibleMs: number[];
  /** Of which, in the page: the row's insertion → the animation frame that paints it. */
  frameWaitMs: number[];
  /** Click on Approve (an in-page click on the button) → the agent's long-poll answered. */
  approveToReleaseMs: number[];
  /** Of which, in the page's own clock (resource timing): the click → the decision's POST sent. */
  clickToSendMs: number[];
  /** Of which, in the page's own clock: the decision's POST, sent → its answer read. */
  decisionPostMs: number[];
  /** `GET /requests/{id}` calls the page made for a new row before showing it (decision 035: 0). */
  rowFetches: number;
  errors: number;
  hopMs: number;
};

export type LeadResult =
  { isSkipped: false; samples: LeadSamples } | { isSkipped: true; reason: string };

/** How many times the page has fetched one request's row so far, by its resource timing. */
function countRowFetches(page: Page, requestId: string): Promise<number> {
  const path = JSON.stringify(`/api/v1/requests/${requestId}`);
  return page.evaluate(
    `performance.getEntriesByType("resource").filter((entry) => new URL(entry.name).pathname === ${path}).length`,
  );
}

/**
 * The decision's POST as the page saw it, against the click's moment in the page's clock (set by
 * the click itself): diagnostics only, never compared with the bench's clock.
 */
function readDecisionPost(
  page: Page,
  requestId: string,
): Promise<{ clickToSendMs: number; postMs: number } | null> {
  const path = JSON.stringify(`/api/v1/requests/${requestId}/responses`);
  return page.evaluate(`(() => {
    const post = performance
      .getEntriesByType("resource")
      .find((entry) => new URL(entry.name).pathname === ${path});
    if (!post || window.benchClickAt === undefined) return null;
    return { clickToSendMs: post.startTime - window.benchClickAt, postMs: post.responseEnd - post.startTime };
  })()`);
}

/**
 * Sets a watch in the page that calls back when a row with `label` is in the list. A string, not a
 * function: tsx would wrap a function's inner closures in a helper the page does not have.
 */
function watchForRow(page: Page, label: string): Promise<void> {
  const selector = JSON.stringify(
    `ul[aria-label="Pending requests"] button[aria-label=${JSON.stringify(label)}]`,
  );
  return page.evaluate(`(() => {
    const selector = ${selector};
    // The frame that paints the row starts in the next animation frame callback.
    const report = () => {
      const insertedAt = performance.now();
      requestAnimationFrame(() => {
        void window.benchRowSeen(${JSON.stringify(label)}, performance.now() - insertedAt);
      });
    };
    if (document.querySelector(selector)) return report();
    const observer = new MutationObserver(() => {
      if (!document.querySelector(selector)) return;
      observer.disconnect();
      report();
    });
    observer.observe(document.body, { childList: true, subtree: true });
  })()`);
}

export async function measureLead(options: {
  baseUrl: string;
  session: BenchSession;
  /** One fresh agent per iteration (warm-up first), so each row is told apart by its name. */
  agents: readonly Agent[];
  warmup: number;
}): Promise<LeadResult> {
  if (!existsSync(env.CHROMIUM_PATH)) {
    return {
      isSkipped: true,
      reason: `no Chromium at ${env.CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
    };
  }
  const browser = await chromium
    .launch({
      executablePath: env.CHROMIUM_PATH,
      args: ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"],
    })
    .catch((error: unknown) => error as Error);
  if (browser instanceof Error) {
    return { isSkipped: true, reason: `Chromium did not start: ${browser.message}` };
  }
  const samples: LeadSamples = {
    rowVisibleMs: [],
    frameWaitMs: [],
    approveToReleaseMs: [],
    clickToSendMs: [],
    decisionPostMs: [],
    rowFetches: 0,
    errors: 0,
    hopMs: 0,
  };
  try {
    const context = await signedInBrowserContext(browser, options.baseUrl, options.session);
    const page = await context.newPage();
    const seen = new Map<string, (at: number, frameWaitMs: number) => void>();
    await page.exposeFunction("benchRowSeen", (label: string, frameWaitMs: number) => {
      const at = performance.now();
      seen.get(label)?.(at, frameWaitMs);
    });
    await page.goto(`${options.baseUrl}/`);
    await page.getByRole("heading", { name: "Approval inbox" }).waitFor();
    await page.getByRole("status", { name: "Connection: Live" }).waitFor();

    const trips: number[] = [];
    for (let trip = 0; trip < 20; trip++) {
      const startedAt = performance.now();
      await page.evaluate(() => 0);
      trips.push(performance.now() - startedAt);
    }
    samples.hopMs = median(trips) / 2;

    for (const [index, agent] of options.agents.entries()) {
      const isCounted = index >= options.warmup;
      const label = `Plan from ${agent.name}`;
      // Not timed: a bounded resource-timing buffer, holding this iteration's calls only.
      await page.evaluate(() => performance.clearResourceTimings());
      const rowSeen = new Promise<{ at: number; frameWaitMs: number }>((resolve) =>
        seen.set(label, (at, frameWaitMs) => resolve({ at, frameWaitMs })),
      );
      await watchForRow(page, label);
      const request = await callApi<RequestView>(
        options.baseUrl,
        { token: agent.token },
        "POST",
        "/requests",
        { type: "plan_approval", payload: { plan: `bench lead ${index}` } },
      );
      const committedAt = performance.now();
      const row = await Promise.race([rowSeen, sleep(10_000).then(() => null)]);
      seen.delete(label);
      if (!row) {
        samples.errors += 1;
        continue;
      }

      const rowFetches = await countRowFetches(page, request.id);

      // Not timed: the Lead opens the card; the agent waits on its request as a worker does.
      await page
        .getByRole("list", { name: "Pending requests" })
        .getByRole("button", { name: label })
        .click();
      const card = page.getByRole("article");
      await card.getByRole("heading", { name: label }).waitFor();
      const approve = card.getByRole("button", { name: "Approve" });
      await approve.waitFor();
      const released = callApi<RequestView>(
        options.baseUrl,
        { token: agent.token },
        "GET",
        `/requests/${request.id}?wait=30`,
      );
      // Long enough for the long-poll to have read the request and parked.
      await sleep(100);
      const button = await approve.elementHandle();
      const clickedAt = performance.now();
      void button?.evaluate((element) => {
        (window as unknown as { benchClickAt: number }).benchClickAt = performance.now();
        (element as HTMLButtonElement).click();
      });
      const answer = await released.catch(() => null);
      const releasedAt = performance.now();
      if (answer?.status !== "approved") samples.errors += 1;
      else if (isCounted) {
        samples.rowVisibleMs.push(row.at - committedAt);
        samples.frameWaitMs.push(row.frameWaitMs);
        samples.approveToReleaseMs.push(releasedAt - clickedAt);
        samples.rowFetches += rowFetches;
        const post = await readDecisionPost(page, request.id);
        if (post) {
          samples.clickToSendMs.push(post.clickToSendMs);
          samples.decisionPostMs.push(post.postMs);
        }
      }

      // Not timed: an empty list for the next request, as a Lead who keeps up has.
      await card.getByRole("status").filter({ hasText: "approved" }).waitFor();
      await page.getByRole("button", { name: "Clear decided requests" }).click();
      await page.getByRole("button", { name: label }).waitFor({ state: "detached" });
    }
    return { isSkipped: false, samples };
  } finally {
    await browser.close();
  }
}
