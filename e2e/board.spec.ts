import AxeBuilder from "@axe-core/playwright";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { BoardPage } from "./pages/board-page";
import { agentApi, humanApi, submitPlan } from "./support/api";
import { expectNoSidewaysScroll } from "./support/layout";
import { signedInPage } from "./support/sign-in";

/**
 * The team board at a thousand agents (issue 16): registered through the API, no worker behind
 * them. Twenty of them wait on the Lead with a plan; the rest never beat and go offline as the
 * server's sweeper finds them, which is itself a stream of live updates the board must absorb.
 */
const TEAM_SIZE = 1_000;
const prefix = `k${randomBytes(2).toString("hex")}`;
const nameOf = (index: number) => `${prefix}-${index}`;
/** Submitted from #1000 down to #50, so the longest blocked is not the first in name order. */
const WAITING = Array.from({ length: 20 }, (_, step) => 1_000 - step * 50);
const LIVE = 999;

let lead: APIRequestContext;
const agents = new Map<number, APIRequestContext>();
let heartbeats: ReturnType<typeof setInterval> | undefined;

async function register(index: number): Promise<void> {
  const isPlanning = WAITING.includes(index) || index === LIVE;
  const response = await lead.post("/api/v1/agents", {
    data: {
      name: nameOf(index),
      role: index % 2 === 0 ? "builder" : "reviewer",
      requirePlan: isPlanning,
    },
  });
  expect(response.status(), await response.text()).toBe(201);
  if (isPlanning) {
    agents.set(index, await agentApi(((await response.json()) as { token: string }).token));
  }
}

/** Keeps the agents the spec watches alive: the others may go offline, these must not. */
async function beat(): Promise<void> {
  await Promise.all(
    [...agents].map(async ([index, api]) => {
      // A fresh connection each time: a kept-alive one idle past the server's timeout resets.
      const send = () =>
        api.post("/api/v1/heartbeat", {
          headers: { connection: "close" },
          data: { status: index === LIVE ? "working" : "waiting_approval" },
        });
      await send().catch(send);
    }),
  );
}

// Two shared cores: a thousand-row page with a live socket takes longer than the default allows.
test.describe.configure({ mode: "serial", timeout: 120_000 });

test.beforeAll(async () => {
  test.setTimeout(240_000);
  lead = await humanApi();
  const indexes = Array.from({ length: TEAM_SIZE }, (_, index) => index + 1);
  // Eight at a time: as fast as the shared two cores allow without starving the server.
  for (let start = 0; start < indexes.length; start += 8) {
    await Promise.all(indexes.slice(start, start + 8).map(register));
  }
  for (const index of WAITING) {
    const api = agents.get(index);
    if (api) await submitPlan(api, `plan of ${nameOf(index)}`);
  }
  await beat();
  heartbeats = setInterval(() => void beat().catch(() => undefined), 5_000);
});

test.afterAll(async () => {
  clearInterval(heartbeats);
  // Their pending plans would sit in every later spec's inbox: a forced stop cancels them.
  for (const index of [...WAITING, LIVE]) {
    await lead.post(`/api/v1/agents/${nameOf(index)}/force-stop`);
  }
  for (const api of agents.values()) await api.dispose();
  await lead.dispose();
});

test("a thousand agents open as a table with the agents waiting on you first", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto();
  await expect(board.table()).toBeVisible();
  await expect(board.bucketCount("Waiting on you")).not.toHaveText("0");
  expect(Number(await board.bucketCount("Waiting on you").textContent())).toBeGreaterThanOrEqual(
    WAITING.length,
  );
  const rows = board.rows();
  // Virtualized: a screenful in the DOM, not a thousand.
  expect(await rows.count()).toBeLessThan(80);
  for (let index = 0; index < 10; index++) {
    await expect(rows.nth(index).getByTestId("row-pending")).toContainText("awaiting you");
  }
  await page.screenshot({ path: "test-results/screenshots/board-1000.png" });
  await page.context().close();
});

test("/ focuses the search, which finds one agent by name and goes in the URL", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto();
  await page.keyboard.press("/");
  await expect(board.search()).toBeFocused();
  await page.keyboard.type(nameOf(777));
  await expect(board.rows()).toHaveCount(1);
  await expect(board.row(nameOf(777))).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`[?&]q=${nameOf(777)}`));
  await page.context().close();
});

test("a status bucket filters the board, and sorting by blocked time puts the longest first", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto(`q=${prefix}-&sort=name`);
  await expect(board.rowNames().then((names) => names.slice(0, 3))).resolves.toEqual([
    nameOf(1),
    nameOf(2),
    nameOf(3),
  ]);

  await board.bucket("Waiting on you").click();
  await expect(board.bucket("Waiting on you")).toHaveAttribute("aria-pressed", "true");
  await expect(page).toHaveURL(/[?&]status=waiting_on_you/);
  await expect(board.shownCount()).toContainText(`${WAITING.length} of`);
  await expect(board.rows().first()).toHaveAttribute("data-agent", nameOf(50));
  for (const name of await board.rowNames()) {
    expect(WAITING.map(nameOf)).toContain(name);
  }

  await page.getByLabel("Sort by").selectOption({ label: "Blocked longest" });
  await expect(page).toHaveURL(/[?&]sort=blocked/);
  // Submitted from #1000 down: the longest blocked is #1000. The DOM holds a screenful.
  await expect
    .poll(async () => (await board.rowNames()).slice(0, 8))
    .toEqual(WAITING.slice(0, 8).map(nameOf));
  await page.context().close();
});

test("a new request from agent #999 appears in its row live, without refetching the board", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto(`q=${nameOf(LIVE)}`);
  const row = board.row(nameOf(LIVE));
  await expect(row.getByTestId("row-pending")).toHaveText("none");
  await expect(board.liveIndicator()).toHaveAccessibleName("Connection: Live");
  // Counted from here: the page's own first fetch of the board is how it loads (decision 080).
  const boardFetches: string[] = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname === "/api/v1/agents" && !url.searchParams.has("name")) {
      boardFetches.push(request.url());
    }
  });

  const live = agents.get(LIVE);
  if (!live) throw new Error("agent #999 has no client");
  await submitPlan(live, "a plan sent while the Lead watches");
  await expect(row.getByTestId("row-pending")).toContainText("Plan awaiting you");
  await expect(row.getByTestId("row-pending")).toContainText(/auto-rejects in \d+:\d\d/);
  expect(boardFetches).toEqual([]);
  await page.context().close();
});

test("j/k move through the rows, enter opens the agent, a bulk action reaches every selected agent", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto(`q=${prefix}-&sort=name`);
  await page.keyboard.press("j");
  await expect(board.rowLink(nameOf(1))).toBeFocused();
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await page.keyboard.press("k");
  await expect(board.rowLink(nameOf(2))).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/agents/${nameOf(2)}$`));
  await page.goBack();
  await expect(board.table()).toBeVisible();

  for (const index of [2, 3]) {
    await board
      .row(nameOf(index))
      .getByRole("checkbox", { name: `Select ${nameOf(index)}` })
      .check();
  }
  const bulk = page.getByRole("region", { name: "Bulk actions" });
  await expect(bulk).toContainText("2 selected");
  await bulk.getByRole("button", { name: "Require plan for the selected agents" }).click();
  const dialog = page.getByRole("dialog", { name: "Require a plan from 2 agents" });
  await dialog.getByRole("button", { name: "Require plan" }).click();
  await expect(dialog).toBeHidden();
  for (const index of [2, 3]) {
    await expect(board.row(nameOf(index))).toContainText("plan required");
    const stored = await lead.get(`/api/v1/agents/${nameOf(index)}`);
    expect(((await stored.json()) as { gate: string }).gate).toBe("required");
  }
  await expect(bulk).toBeHidden();

  await board
    .row(nameOf(3))
    .getByRole("button", { name: `Actions for ${nameOf(3)}` })
    .click();
  await page.getByRole("button", { name: `Message ${nameOf(3)}` }).click();
  const message = page.getByRole("dialog", { name: `Message ${nameOf(3)}` });
  await expect(message).toBeVisible();
  await message.getByRole("button", { name: "Cancel" }).click();
  await expect(message).toBeHidden();
  await page.context().close();
});

test("the Lead's choice of view is remembered over the default for a large team", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto();
  await expect(board.table()).toBeVisible();
  await page.getByRole("group", { name: "View" }).getByRole("button", { name: "Cards" }).click();
  await expect(page).toHaveURL(/[?&]view=cards/);
  await expect(page.getByRole("article").first()).toBeVisible();
  await board.goto();
  await expect(page.getByRole("article").first()).toBeVisible();
  await expect(board.table()).toBeHidden();
  await page.context().close();
});

test("axe finds no WCAG 2.1 AA violation on the table view, which scrolls in its own box on a phone", async ({
  browser,
}) => {
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto("view=table");
  await expect(board.rows().first()).toBeVisible();
  await board.rows().first().getByRole("checkbox").check();
  await expect(page.getByRole("region", { name: "Bulk actions" })).toBeVisible();
  const results = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  expect(
    results.violations.map((violation) => ({
      id: violation.id,
      nodes: violation.nodes.map((node) => node.target.join(" ")).slice(0, 3),
    })),
  ).toEqual([]);
  // At a phone's width the table scrolls in its own box, not the page.
  await expectNoSidewaysScroll(page);
  await page.context().close();
});

test("past 500 agents gone the board shows those that went last, says how many it leaves out, and shows all on request", async ({
  browser,
}) => {
  // A day of a `connect` token's sessions, each ended: nothing prunes an agent.
  const stopping = Array.from({ length: 520 }, (_, index) => index + 1).filter(
    (index) => !WAITING.includes(index) && index !== LIVE,
  );
  for (let start = 0; start < stopping.length; start += 8) {
    await Promise.all(
      stopping.slice(start, start + 8).map(async (index) => {
        const response = await lead.post(`/api/v1/agents/${nameOf(index)}/force-stop`);
        expect(response.status(), await response.text()).toBe(200);
      }),
    );
  }
  const { page } = await signedInPage(browser);
  const board = new BoardPage(page);
  await board.goto(`q=${nameOf(1)}&sort=name`);
  const note = page.getByRole("note", { name: "Agents gone" });
  await expect(note).toContainText(/the latest 500 are shown; [\d,]+ before them are not/);
  await expect(board.bucketCount("Ended")).toHaveText("500");
  // The first stopped ended before the last 500: not on the board, though its name is searched.
  await expect(board.row(nameOf(17))).toBeVisible();
  await expect(board.row(nameOf(1))).toHaveCount(0);

  await note.getByRole("button", { name: "Show all agents" }).click();
  await expect(note).toContainText("Every agent is shown");
  await expect(board.row(nameOf(1))).toBeVisible();
  await note.getByRole("button", { name: "Show only the latest gone" }).click();
  await expect(board.row(nameOf(1))).toHaveCount(0);
  await page.context().close();
});
