import { expect, type Locator, type Page } from "@playwright/test";

export class HistoryPage {
  constructor(private readonly page: Page) {}

  async goto(query = ""): Promise<void> {
    await this.page.goto(`/history${query}`);
    await expect(this.page.getByRole("heading", { name: "History", level: 1 })).toBeVisible();
  }

  filter(label: "Agent" | "Type" | "Status" | "Decided by"): Locator {
    return this.page.getByRole("form", { name: "Filter history" }).getByLabel(label);
  }

  async filterBy(label: "Agent" | "Type" | "Status", value: string): Promise<void> {
    await this.filter(label).selectOption(value);
  }

  rows(): Locator {
    return this.page
      .getByRole("table")
      .getByRole("row")
      .filter({ has: this.page.getByRole("cell") });
  }

  row(requestId: string): Locator {
    return this.page.locator(`tr[data-request-id="${requestId}"]`);
  }
}

/** The per-agent timeline, reached from history and from the team board. */
export class AgentTimelinePage {
  constructor(private readonly page: Page) {}

  async expectVisible(name: string): Promise<void> {
    await expect(this.page).toHaveURL(new RegExp(`/agents/${name}$`));
    await expect(this.page.getByRole("heading", { name, level: 1 })).toBeVisible();
  }

  entries(): Locator {
    return this.page.getByRole("list", { name: /^Timeline of / }).getByRole("listitem");
  }

  entry(title: string | RegExp): Locator {
    return this.entries().filter({ hasText: title });
  }
}
