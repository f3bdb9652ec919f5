import { expect, test } from "@playwright/test";
import {
  isReportingToolResults,
  replyWithText,
  replyWithToolUse,
  startAnthropicStub,
  type AnthropicStub,
  type StubRequest,
} from "../tests/support/anthropic-stub";
import { AgentTimelinePage, HistoryPage } from "./pages/history-page";
import { E2E_MODEL_STUB } from "./support/accounts";
import { humanApi, uniqueAgentName } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

const QUESTION = {
  question: "Deploy to staging or production?",
  options: [
    { id: "staging", label: "Staging", description: "the shared test environment" },
    { id: "production", label: "Production", description: "what customers use" },
  ],
  default: "staging",
};

let stub: AnthropicStub;
const agentName = uniqueAgentName("e2e-asker");

/** The model's turns for our agent: its prompt names it. */
function turnsOf(name: string): StubRequest[] {
  return stub.requests.filter((request) => JSON.stringify(request.body.messages).includes(name));
}

test.beforeAll(async () => {
  // The real worker's Anthropic model, pointed at this stub by the e2e server's supervisor: it
  // asks its question on the first turn and ends its turn once it has been told the answer.
  stub = await startAnthropicStub({
    apiKey: E2E_MODEL_STUB.apiKey,
    port: E2E_MODEL_STUB.port,
    respond: (request) =>
      isReportingToolResults(request)
        ? replyWithText("Thanks, noted.")
        : replyWithToolUse("ask_lead", QUESTION, { id: "toolu_ask_1", text: "I need to ask." }),
  });
});

test.afterAll(async () => {
  await stub.close();
});

test.afterEach(closeSignedInPages);

test("a question appears live, the Lead answers with a key press, and the worker's next model turn carries the answer", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const registered = await lead.post("/api/v1/agents", {
    data: {
      name: agentName,
      role: "release engineer",
      prompt: "Deploy the release; ask the Lead where.",
      requirePlan: false,
      worker: { model: "anthropic" },
    },
  });
  expect(registered.status(), await registered.text()).toBe(201);

  await expect(inbox.requestItem(agentName, "Question")).toBeVisible({ timeout: 30_000 });
  await inbox.select(agentName, "Question");
  const detail = inbox.detail();
  await expect(detail).toContainText(QUESTION.question);
  await expect(detail).toContainText("Default if unanswered: Staging (staging)");
  await expect(detail).toContainText(/answers the default in \d+:\d\d/);
  await expect(inbox.option("Staging")).toBeVisible();
  await expect(inbox.option("Production")).toBeVisible();
  await expect
    .poll(async () => (await (await lead.get(`/api/v1/agents/${agentName}`)).json()).status)
    .toBe("waiting_answer");
  // While it waits, the worker does not call the model again.
  expect(turnsOf(agentName)).toHaveLength(1);
  await page.screenshot({ path: "test-results/screenshots/question.png" });

  await page.keyboard.press("2");
  await inbox.expectDecided(/answered by lead@e2e\.test/);
  await expect(detail.getByRole("status")).toContainText("Answer: Production (production)");

  await expect.poll(() => turnsOf(agentName).length, { timeout: 30_000 }).toBe(2);
  const nextTurn = JSON.stringify(turnsOf(agentName)[1]?.body.messages);
  expect(nextTurn).toContain("toolu_ask_1");
  expect(nextTurn).toContain("The Lead answered your question");
  expect(nextTurn).toContain("Production (production)");
  await expect
    .poll(async () => (await (await lead.get(`/api/v1/agents/${agentName}`)).json()).status)
    .not.toBe("waiting_answer");

  const history = new HistoryPage(page);
  await history.goto(`?agent=${agentName}`);
  const row = history.rows().filter({ hasText: QUESTION.question });
  await expect(row).toContainText("answered");
  await expect(row).toContainText("Production (production)");
  await expect(row).toContainText("lead@e2e.test");

  await page.goto(`/agents/${agentName}`);
  const timeline = new AgentTimelinePage(page);
  await timeline.expectVisible(agentName);
  await expect(timeline.entry(/answered by lead@e2e\.test/)).toContainText("Production");
});
