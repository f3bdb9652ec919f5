import { expect, type Page } from "@playwright/test";

/** At a phone's width nothing on the page may reach past the screen's right edge. */
export async function expectNoSidewaysScroll(page: Page, width = 390): Promise<void> {
  const before = page.viewportSize();
  await page.setViewportSize({ width, height: 844 });
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth))
    .toBeLessThanOrEqual(0);
  if (before) await page.setViewportSize(before);
}
