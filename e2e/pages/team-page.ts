import { expect, type Locator, type Page } from "@playwright/test";

/** Every action a Lead has on the board; a viewer must see none of them. */
const ACTION_NAMES =
  /^(Spawn teammate|Broadcast|Message|Require plan|Request shutdown|Shutdown requested|Force stop|Respawn)/;

export class TeamPage {
  constructor(private readonly page: Page) {}

  /**
   * The board as cards, narrowed to `search` when given: a large team from another spec must not
   * push the agent under test out of the virtualized list.
   */
  async goto(options: { search?: string } = {}): Promise<void> {
    const query = new URLSearchParams({
      view: "cards",
      ...(options.search ? { q: options.search } : {}),
    });
    await this.page.goto(`/team?${query}`);
    await expect(this.page.getByRole("heading", { name: "Team", level: 1 })).toBeVisible();
    // The page fetches the team once it runs (decision 080): shown, the board is live.
    await expect(this.page.getByText("Loading the team…")).toHaveCount(0);
  }

  card(name: string): Locator {
    return this.page.getByRole("article", { name, exact: true });
  }

  status(name: string): Locator {
    return this.card(name).getByTestId("agent-status");
  }

  async expectStatus(name: string, status: string, options: { timeout?: number } = {}) {
    await expect(this.status(name)).toHaveAttribute("data-agent-status", status, options);
    await expect(this.status(name)).toHaveText(status.replaceAll("_", " "));
  }

  pendingRequests(name: string): Locator {
    return this.card(name).getByRole("list", { name: "Pending requests" }).getByRole("listitem");
  }

  /** The value shown under a label on the card, e.g. "Blocked tool attempts". */
  fact(name: string, term: string): Locator {
    return this.card(name)
      .locator("dl > div")
      .filter({ has: this.page.locator("dt", { hasText: term }) })
      .locator("dd");
  }

  actionButtons(): Locator {
    return this.page.getByRole("button", { name: ACTION_NAMES });
  }

  async openSpawnDialog(): Promise<Locator> {
    await this.page.getByRole("button", { name: "Spawn teammate" }).click();
    const dialog = this.page.getByRole("dialog", { name: "Spawn a teammate" });
    await expect(dialog).toBeVisible();
    return dialog;
  }

  async fillSpawnForm(
    dialog: Locator,
    teammate: { name: string; role: string; requirePlan: boolean; script: string },
  ): Promise<void> {
    await dialog.getByLabel("Name", { exact: true }).fill(teammate.name);
    await dialog.getByLabel("Role", { exact: true }).fill(teammate.role);
    await dialog.getByLabel("Require plan").setChecked(teammate.requirePlan);
    await dialog.getByLabel("Model").selectOption("scripted");
    await dialog.getByLabel("Script").selectOption(teammate.script);
    await dialog.getByRole("button", { name: "Spawn", exact: true }).click();
  }

  async spawnTeammate(teammate: {
    name: string;
    role: string;
    requirePlan: boolean;
    script: string;
  }): Promise<void> {
    const dialog = await this.openSpawnDialog();
    await this.fillSpawnForm(dialog, teammate);
    await expect(dialog).toBeHidden();
  }

  async requestShutdown(name: string, reason: string): Promise<void> {
    await this.card(name)
      .getByRole("button", { name: `Request shutdown of ${name}` })
      .click();
    const dialog = this.page.getByRole("dialog", { name: `Ask ${name} to shut down` });
    await dialog.getByLabel("Reason").fill(reason);
    await dialog.getByRole("button", { name: "Request shutdown" }).click();
    await expect(dialog).toBeHidden();
  }
}
