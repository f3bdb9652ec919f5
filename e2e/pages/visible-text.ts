import { expect, type Locator } from "@playwright/test";

/**
 * Checks that what an agent wrote is on screen inside its card: no element of the card scrolls
 * or spills sideways, and a given piece of text lies within the card's box and the viewport.
 */
export class VisibleTextChecks {
  constructor(private readonly card: Locator) {}

  /** Every block inside the card, the card included, is no wider inside than outside. */
  async expectNoSidewaysScroll(): Promise<void> {
    const offenders = await this.card.evaluate((root) => {
      // Inline boxes have no client width, and screen-reader-only text is a 1 px clip on purpose.
      const blocks = [root, ...root.querySelectorAll("*")].filter(
        (element) => getComputedStyle(element).display !== "inline" && element.clientWidth > 1,
      );
      return blocks
        .filter((element) => element.scrollWidth > element.clientWidth + 1)
        .map(
          (element) =>
            `<${element.tagName.toLowerCase()} class="${element.className}"> ${element.scrollWidth} > ${element.clientWidth}`,
        );
    });
    expect(offenders).toEqual([]);
    const page = await this.card.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(page.scroll).toBeLessThanOrEqual(page.client);
  }

  /** The text (found in one text node under `within`) is drawn inside the card and the viewport. */
  async expectTextInside(within: Locator, text: string): Promise<void> {
    const cardBox = await this.card.boundingBox();
    const rect = await within.evaluate((root, wanted) => {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent?.indexOf(wanted) ?? -1;
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + wanted.length);
        const box = range.getBoundingClientRect();
        return { left: box.left, right: box.right, width: box.width, height: box.height };
      }
      return null;
    }, text);
    expect(rect, `"${text}" is not in the card`).not.toBeNull();
    if (!rect || !cardBox) return;
    expect(rect.width).toBeGreaterThan(0);
    expect(rect.height).toBeGreaterThan(0);
    expect(rect.left).toBeGreaterThanOrEqual(cardBox.x - 1);
    expect(rect.right).toBeLessThanOrEqual(cardBox.x + cardBox.width + 1);
    const viewport = this.card.page().viewportSize();
    if (viewport) expect(rect.right).toBeLessThanOrEqual(viewport.width);
  }

  /** None of the characters reaches the document: not its text, not an attribute. */
  static async expectAbsentFromPage(card: Locator, characters: string[]): Promise<void> {
    const found = await card.evaluate((_root, wanted) => {
      const body = document.body.cloneNode(true) as HTMLElement;
      for (const script of body.querySelectorAll("script")) script.remove();
      const markup = body.outerHTML;
      return wanted.filter((character) => markup.includes(character));
    }, characters);
    expect(found.map((character) => `U+${character.codePointAt(0)?.toString(16)}`)).toEqual([]);
  }
}
