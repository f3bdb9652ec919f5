import { expect, type Locator, type Page } from "@playwright/test";

export class InboxPage {
  constructor(private readonly page: Page) {}

  async goto(): Promise<void> {
    await this.page.goto("/");
    await this.expectVisible();
  }

  async expectVisible(): Promise<void> {
    await expect(this.page).toHaveURL(/\/$/);
    await expect(this.page.getByRole("heading", { name: "Approval inbox" })).toBeVisible();
  }

  async expectEmpty(): Promise<void> {
    await expect(this.page.getByText("No requests are waiting for you.")).toBeVisible();
  }

  async expectLive(): Promise<void> {
    await expect(this.page.getByRole("status", { name: "Connection: Live" })).toBeVisible();
  }

  requestItem(agent: string, type = "Plan"): Locator {
    return this.page
      .getByRole("list", { name: "Pending requests" })
      .getByRole("button", { name: `${type} from ${agent}` });
  }

  detail(): Locator {
    return this.page.getByRole("article");
  }

  async select(agent: string, type = "Plan"): Promise<void> {
    await this.requestItem(agent, type).click();
    await expect(
      this.detail().getByRole("heading", { name: `${type} from ${agent}` }),
    ).toBeVisible();
  }

  async approve(feedback = ""): Promise<void> {
    if (feedback) await this.detail().getByLabel("Feedback").fill(feedback);
    await this.detail().getByRole("button", { name: "Approve" }).click();
  }

  async reject(feedback: string): Promise<void> {
    await this.detail().getByLabel("Feedback").fill(feedback);
    await this.detail().getByRole("button", { name: "Reject" }).click();
  }

  /** A question's answer button, named by its option's label. */
  option(label: string): Locator {
    return this.detail()
      .getByRole("group", { name: "Answer with an option" })
      .getByRole("button", { name: label, exact: true });
  }

  async expectDecided(pattern: RegExp): Promise<void> {
    // A pending tool call's card has other live regions (the rule preview's count) until then.
    await expect(this.detail().getByRole("status").filter({ hasText: pattern })).toBeVisible();
  }

  async signOut(): Promise<void> {
    await this.page.getByRole("button", { name: "Sign out" }).click();
  }
}
