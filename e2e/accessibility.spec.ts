import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { humanApi, registerApiAgent, submitPlan } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

// Every console page, scanned by axe-core against WCAG 2.1 A and AA with real data on screen: a
// pending plan open in the inbox, a decided one in history, an agent on the board.
const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

async function expectNoViolations(page: Page, where: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_21_AA).analyze();
  const summary = violations.map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes
        .map((node) => node.target.join(" "))
        .join(", ")}`,
  );
  expect.soft(summary, `axe-core on ${where}`).toEqual([]);
}

test.afterEach(closeSignedInPages);

test("the sign-in page passes axe-core", async ({ page }) => {
  await page.goto("/sign-in");
  await expect(page.getByRole("button", { name: "Sign in" })).toBeVisible();
  await expectNoViolations(page, "/sign-in");
});

test("every signed-in page passes axe-core with data on screen", async ({ browser }) => {
  test.setTimeout(90_000);
  const lead = await humanApi();
  const pending = await registerApiAgent(lead);
  const pendingId = await submitPlan(
    pending.api,
    "## Plan\n\n1. Read the code\n2. Change `src/a.ts`",
  );
  const decided = await registerApiAgent(lead);
  const decidedId = await submitPlan(decided.api, "A plan the Lead rejects");
  const response = await lead.post(`/api/v1/requests/${decidedId}/responses`, {
    data: { type: "plan_approval_response", approve: false, feedback: "name the files" },
  });
  expect(response.status(), await response.text()).toBe(200);

  const asking = await registerApiAgent(lead, { requirePlan: false });
  const question = await asking.api.post("/api/v1/requests", {
    data: {
      type: "question",
      payload: {
        question: "Which environment should the release notes target?",
        options: [
          { id: "staging", label: "Staging", description: "the rehearsal" },
          { id: "production", label: "Production" },
        ],
        allowText: true,
        default: "staging",
      },
    },
  });
  expect(question.status(), await question.text()).toBe(201);

  const { page, inbox } = await signedInPage(browser);
  await inbox.select(asking.name, "Question");
  await expect(inbox.detail().getByRole("button", { name: /Production/ })).toBeVisible();
  await expectNoViolations(page, "the inbox with a question open");
  // Answered here, so the specs after this one start from an inbox with nothing of ours pending.
  const { id: questionId } = (await question.json()) as { id: string };
  const answered = await lead.post(`/api/v1/requests/${questionId}/responses`, {
    data: { type: "question_response", approve: true, answer: { option: "production" } },
  });
  expect(answered.status(), await answered.text()).toBe(200);
  await inbox.select(pending.name);
  await expectNoViolations(page, "the inbox with a plan open");
  const elsewhere = await lead.post(`/api/v1/requests/${pendingId}/responses`, {
    data: { type: "plan_approval_response", approve: true, feedback: "decided in another tab" },
  });
  expect(elsewhere.status(), await elsewhere.text()).toBe(200);
  await inbox.expectDecided(/approved by/);
  await expectNoViolations(page, "the inbox after a request was decided elsewhere");

  for (const [path, heading] of [
    ["/team", "Team"],
    ["/history", "History"],
    [`/agents/${decided.name}`, decided.name],
    ["/settings", "Settings"],
    ["/rules", "Rules"],
  ] as const) {
    await page.goto(path);
    await expect(page.getByRole("heading", { name: heading, level: 1 })).toBeVisible();
    await expectNoViolations(page, path);
  }
});
