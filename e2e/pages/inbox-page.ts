import { expect, type Page } from "@playwright/test";

export class InboxPage {
  constructor(private readonly page: Page) {}

  async expectVisible(): Promise<void> {
    await expect(this.page).toHaveURL(/\/$/);
    await expect(this.page.getByRole("heading", { name: "Approval inbox" })).toBeVisible();
  }

  async expectEmpty(): Promise<void> {
    await expect(this.page.getByText("No requests are waiting for you.")).toBeVisible();
  }

  async signOut(): Promise<void> {
    await this.page.getByRole("button", { name: "Sign out" }).click();
  }
}
