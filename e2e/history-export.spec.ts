import { readFile } from "node:fs/promises";
import { expect, test, type Page } from "@playwright/test";
import { HistoryPage } from "./pages/history-page";
import { humanApi, registerApiAgent, submitPlan } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

test.afterEach(closeSignedInPages);

async function download(page: Page, name: string): Promise<{ file: string; text: string }> {
  const [file] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("navigation", { name: "Export history" }).getByRole("button", { name }).click(),
  ]);
  const path = await file.path();
  return { file: file.suggestedFilename(), text: await readFile(path, "utf8") };
}

test("Export downloads what the History filters match, as CSV or JSON Lines, formulas made inert", async ({
  browser,
}) => {
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  const other = await registerApiAgent(lead);
  const ids: string[] = [];
  for (const [who, feedback] of [
    [agent, '=HYPERLINK("http://evil.example")'],
    [agent, 'split it, "please"'],
    [other, "not this one"],
  ] as const) {
    const id = await submitPlan(who.api, `plan for ${who.name}`);
    const response = await lead.post(`/api/v1/requests/${id}/responses`, {
      data: { type: "plan_approval_response", approve: false, feedback },
    });
    expect(response.status(), await response.text()).toBe(200);
    if (who === agent) ids.push(id);
  }

  const { page } = await signedInPage(browser);
  const history = new HistoryPage(page);
  await history.goto();
  await history.filterBy("Agent", agent.name);
  await expect(history.rows()).toHaveCount(2);

  const csv = await download(page, "Export CSV");
  expect(csv.file).toMatch(/^handshake-requests-.+\.csv$/);
  const lines = csv.text.trimEnd().split("\r\n");
  expect(lines[0]).toMatch(/^"id","created_at",/);
  expect(lines).toHaveLength(3);
  for (const id of ids) expect(csv.text).toContain(`"${id}"`);
  expect(csv.text).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
  expect(csv.text).toContain(`"split it, ""please"""`);
  expect(csv.text).not.toContain(other.name);

  const jsonl = await download(page, "Export JSON Lines");
  expect(jsonl.file).toMatch(/\.jsonl$/);
  const views = jsonl.text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { id: string; agent: string; decidedBy: { kind: string } });
  expect(views.map((view) => view.id).sort()).toEqual([...ids].sort());
  expect(views.every((view) => view.agent === agent.name && view.decidedBy.kind === "human")).toBe(
    true,
  );
});
