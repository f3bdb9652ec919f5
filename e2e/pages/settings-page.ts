import { expect, type Locator, type Page } from "@playwright/test";

export class SettingsPage {
  constructor(private readonly page: Page) {}

  async open(): Promise<void> {
    await this.page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Settings" })
      .click();
    await expect(this.page.getByRole("heading", { name: "Settings", level: 1 })).toBeVisible();
  }

  scopeSelect(): Locator {
    return this.page.getByLabel("Scope", { exact: true });
  }

  /** Creates a token and returns its secret, read from the one place it is ever shown. */
  async createToken(name: string, scope: string): Promise<string> {
    await this.page.getByLabel("Name", { exact: true }).fill(name);
    await this.scopeSelect().selectOption(scope);
    await this.page.getByRole("button", { name: "Create token" }).click();
    const secret = this.page.getByRole("region", { name: "New token" }).getByLabel("Token secret");
    await expect(secret).toHaveValue(/^hs_/);
    return secret.inputValue();
  }

  row(name: string): Locator {
    return this.page.getByTestId("token-row").and(this.page.locator(`[data-token-name="${name}"]`));
  }

  rows(): Locator {
    return this.page.getByTestId("token-row");
  }

  async revoke(name: string): Promise<void> {
    await this.row(name)
      .getByRole("button", { name: `Revoke ${name}` })
      .click();
    const dialog = this.page.getByRole("dialog", { name: `Revoke token '${name}'?` });
    await expect(dialog).toBeVisible();
    await dialog.getByRole("button", { name: "Revoke", exact: true }).click();
    await expect(dialog).toBeHidden();
  }
}
