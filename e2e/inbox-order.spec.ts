import { expect, test, type APIRequestContext } from "@playwright/test";
import { humanApi, registerApiAgent, submitPlan } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

const spawned: string[] = [];

test.afterEach(async () => {
  await closeSignedInPages();
  // Later specs share this server: end the 250 agents so their requests leave every inbox.
  const lead = await humanApi();
  for (let i = 0; i < spawned.length; i += 25) {
    await Promise.all(
      spawned.slice(i, i + 25).map((name) => lead.post(`/api/v1/agents/${name}/force-stop`)),
    );
  }
  spawned.length = 0;
});

type Listed = { id: string; agent: string; target: string; createdAt: string; expiresAt: string };

/** Every pending request waiting on the Lead, read newest-first page by page as history does. */
async function listPendingForLead(lead: APIRequestContext): Promise<Listed[]> {
  const items: Listed[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `status=pending&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page = (await (await lead.get(`/api/v1/requests?${query}`)).json()) as {
      items: Listed[];
      nextCursor: string | null;
    };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items.filter((item) => item.target === "lead");
}

test("with 250 pending requests the oldest is first in the inbox, every one is listed, and the oldest is reachable by keyboard", async ({
  browser,
}) => {
  test.setTimeout(180_000);
  const lead = await humanApi();
  const oldest = await registerApiAgent(lead, { name: `oldest-${Date.now().toString(36)}` });
  spawned.push(oldest.name);
  await submitPlan(oldest.api, "the longest-waiting plan");
  for (let i = 0; i < 249; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, 249 - i) }, async () => {
        const agent = await registerApiAgent(lead);
        spawned.push(agent.name);
        await submitPlan(agent.api, "a later plan");
      }),
    );
  }
  const pending = await listPendingForLead(lead);
  expect(pending.length).toBeGreaterThanOrEqual(250);
  const expectedFirst = [...pending].sort(
    (a, b) =>
      Date.parse(a.createdAt) - Date.parse(b.createdAt) ||
      Date.parse(a.expiresAt) - Date.parse(b.expiresAt) ||
      a.id.localeCompare(b.id),
  )[0];

  const { page, inbox } = await signedInPage(browser);
  const list = page.getByRole("list", { name: "Pending requests" });
  await expect(list.getByRole("listitem")).toHaveCount(pending.length, { timeout: 30_000 });
  await expect(page).toHaveTitle(new RegExp(`^\\(${pending.length}\\) Inbox`));
  await expect(list.getByRole("button").first()).toHaveAccessibleName(
    `Plan from ${expectedFirst?.agent}`,
  );
  await expect(inbox.requestItem(oldest.name)).toBeVisible();

  // From anywhere in the list, k walks back to the top: the oldest request is the one shown.
  const oldestHeading = inbox
    .detail()
    .getByRole("heading", { name: `Plan from ${expectedFirst?.agent}` });
  for (let i = 0; i < 3; i++) await page.keyboard.press("j");
  await expect(oldestHeading).toHaveCount(0);
  for (let i = 0; i < 3; i++) await page.keyboard.press("k");
  await expect(oldestHeading).toBeVisible();
  // And by Tab: the list's first button takes focus and Enter selects it.
  await list.getByRole("button").first().focus();
  await page.keyboard.press("Enter");
  await expect(list.getByRole("button").first()).toHaveAttribute("aria-current", "true");
});
