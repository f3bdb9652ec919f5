import { expect, type Locator, type Page } from "@playwright/test";

/** The team board's table view, as a Lead reads it. */
export class BoardPage {
  constructor(private readonly page: Page) {}

  /** `/team`, with an optional query string (`q=…&sort=…`) as a shared link would carry. */
  async goto(query = ""): Promise<void> {
    await this.page.goto(query ? `/team?${query}` : "/team");
    await expect(this.page.getByRole("heading", { name: "Team", level: 1 })).toBeVisible();
    // The page fetches the team once it runs (decision 080): shown, the board is live.
    await expect(this.page.getByText("Loading the team…")).toHaveCount(0);
  }

  table(): Locator {
    return this.page.getByRole("table", { name: "Agents" });
  }

  rows(): Locator {
    return this.table().locator("tbody tr[data-agent]");
  }

  row(name: string): Locator {
    return this.table().locator(`tbody tr[data-agent="${name}"]`);
  }

  rowLink(name: string): Locator {
    return this.row(name).getByRole("link", { name, exact: true });
  }

  async rowNames(): Promise<string[]> {
    return this.rows().evaluateAll((rows) =>
      rows.map((row) => (row as HTMLElement).dataset.agent ?? ""),
    );
  }

  search(): Locator {
    return this.page.getByLabel("Search agents");
  }

  bucket(label: string): Locator {
    return this.page
      .getByRole("group", { name: "Filter by status" })
      .getByRole("button", { name: new RegExp(`^${label} \\d+$`) });
  }

  bucketCount(label: string): Locator {
    return this.bucket(label).locator("span");
  }

  shownCount(): Locator {
    return this.page.getByText(/\d+ (of \d+ )?shown/);
  }

  liveIndicator(): Locator {
    return this.page.getByRole("status", { name: /^Connection:/ });
  }
}
