import AxeBuilder from "@axe-core/playwright";
import { expect, test } from "@playwright/test";
import {
  isReportingToolResults,
  replyWithText,
  replyWithToolUse,
  startAnthropicStub,
  toolResultsOf,
  type AnthropicStub,
  type StubRequest,
} from "../tests/support/anthropic-stub";
import { AgentTimelinePage, HistoryPage } from "./pages/history-page";
import { E2E_MODEL_STUB } from "./support/accounts";
import { agentApi, humanApi, registerApiAgent, submitPlan, uniqueAgentName } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

const ASKED = "rm -rf build";
const EDITED = "rm -rf build/cache && echo only-the-cache-was-removed";

let stub: AnthropicStub;
const agentName = uniqueAgentName("e2e-cleaner");

/** The model's turns for our agent: its prompt names it. */
function turnsOf(name: string): StubRequest[] {
  return stub.requests.filter((request) => JSON.stringify(request.body.messages).includes(name));
}

test.beforeAll(async () => {
  // A real worker with the Anthropic model, pointed at this stub by the e2e supervisor. The model
  // asks for `rm -rf build`; while the Lead decides it waits; once told of the decision it asks
  // for the same call again, which is where the Lead's edited command runs instead.
  stub = await startAnthropicStub({
    apiKey: E2E_MODEL_STUB.apiKey,
    port: E2E_MODEL_STUB.port,
    respond: (request) => {
      const lastTurn = JSON.stringify(request.body.messages.at(-1));
      const attempt = turnsOf(agentName).length;
      const retry = () =>
        replyWithToolUse("bash", { command: ASKED }, { id: `toolu_clean_${attempt}` });
      // The decision may arrive in the same user turn as the blocked call's result.
      if (lastTurn.includes("was approved")) return retry();
      if (isReportingToolResults(request)) {
        return replyWithText(
          lastTurn.includes("TOOL_APPROVAL_REQUIRED") ? "Waiting for the Lead." : "Done.",
        );
      }
      return retry();
    },
  });
});

test.afterAll(async () => {
  await stub.close();
});

test.afterEach(closeSignedInPages);

test("the Lead edits a risky bash command, approves it, and the worker runs the edited one", async ({
  browser,
}) => {
  test.setTimeout(120_000);
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const registered = await lead.post("/api/v1/agents", {
    data: {
      name: agentName,
      role: "builder",
      prompt: "Clean the build directory.",
      requirePlan: false,
      worker: { model: "anthropic" },
    },
  });
  expect(registered.status(), await registered.text()).toBe(201);

  await inbox.select(agentName, "Risky tool call");
  const detail = inbox.detail();
  await expect(detail).toContainText(ASKED);

  await detail.getByRole("button", { name: "Edit call" }).click();
  const command = detail.getByLabel("Edited command");
  await expect(command).toHaveValue(ASKED);
  await command.fill("");
  await detail.getByRole("button", { name: "Approve edited" }).click();
  await expect(detail.getByRole("alert")).toHaveText("The edited command cannot be empty.");
  await command.fill(EDITED);
  const scan = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"])
    .analyze();
  expect(scan.violations.map((violation) => violation.id)).toEqual([]);
  const decisions: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/responses")) {
      decisions.push(request.postData() ?? "");
    }
  });
  // With the editor open, the `a` shortcut must not approve the call as the agent asked it.
  await detail.getByRole("button", { name: "Approve edited" }).focus();
  await page.keyboard.press("a");
  // Keyboard: Ctrl+Enter in the editor approves the edited version.
  await command.press("Control+Enter");

  await inbox.expectDecided(/approved by lead@e2e\.test/);
  expect(decisions).toHaveLength(1);
  expect(JSON.parse(decisions[0] ?? "{}")).toMatchObject({ editedArgs: { command: EDITED } });
  const edits = detail.getByRole("region", { name: "Approved with the Lead's edits" });
  await expect(edits).toContainText(EDITED);
  await expect(detail).toContainText(ASKED);

  // The worker's retry ran the edited command, and its model was told so.
  await expect
    .poll(
      () =>
        turnsOf(agentName)
          .flatMap(toolResultsOf)
          .some((result) => result.text.includes("only-the-cache-was-removed")),
      { timeout: 30_000 },
    )
    .toBe(true);
  const results = turnsOf(agentName).flatMap(toolResultsOf);
  const ran = results.find((result) => result.text.includes("only-the-cache-was-removed"));
  expect(ran?.isError).toBe(false);
  expect(ran?.text).toContain(`The Lead edited this call before approving it`);
  expect(ran?.text).toContain(`the command: ${EDITED}`);
  const notified = JSON.stringify(turnsOf(agentName).map((turn) => turn.body.messages));
  expect(notified).toContain("approved with the Lead's edits");

  const history = new HistoryPage(page);
  await history.goto(`?agent=${agentName}`);
  const row = history.rows().filter({ hasText: ASKED });
  await expect(row).toContainText("approved");
  await expect(row).toContainText(`Edited by the Lead: ${EDITED}`);

  await page.goto(`/agents/${agentName}`);
  const timeline = new AgentTimelinePage(page);
  await timeline.expectVisible(agentName);
  await expect(timeline.entries().filter({ hasText: "only-the-cache" }).first()).toBeVisible();
});

test("a plan edited before approval is what the agent is approved for", async ({ browser }) => {
  const { inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  const requestId = await submitPlan(agent.api, "1. delete the build directory\n2. rebuild");
  await inbox.select(agent.name);
  const detail = inbox.detail();
  await detail.getByRole("button", { name: "Edit plan" }).click();
  const plan = detail.getByLabel("Edited plan");
  await expect(plan).toHaveValue("1. delete the build directory\n2. rebuild");
  await plan.fill("1. clear build/cache only\n2. rebuild");
  await detail.getByRole("button", { name: "Approve edited" }).click();
  await inbox.expectDecided(/approved by lead@e2e\.test/);
  await expect(
    detail.getByRole("region", { name: "Approved with the Lead's edits" }),
  ).toContainText("clear build/cache only");

  const request = await (await agent.api.get(`/api/v1/requests/${requestId}`)).json();
  expect(request).toMatchObject({
    payload: { plan: "1. delete the build directory\n2. rebuild" },
    response: { editedPlan: "1. clear build/cache only\n2. rebuild" },
  });
});

test("Esc leaves the edit box with the edit kept: `a` then cannot approve the plan as asked", async ({
  browser,
}) => {
  // Red team: Esc threw the edit away and closed the editor, which disarmed the guard on `a`;
  // `a` then approved the agent's own plan.
  const { page, inbox } = await signedInPage(browser);
  const lead = await humanApi();
  const agent = await registerApiAgent(lead);
  const requestId = await submitPlan(agent.api, "1. delete everything\n2. rebuild");
  await inbox.select(agent.name);
  const detail = inbox.detail();
  await detail.getByRole("button", { name: "Edit plan" }).click();
  const plan = detail.getByLabel("Edited plan");
  await plan.fill("1. clear build/cache only");
  await page.keyboard.press("Escape");
  await expect(plan).not.toBeFocused();
  await expect(plan).toHaveValue("1. clear build/cache only");
  await page.keyboard.press("a");
  await detail.getByRole("button", { name: "Approve edited" }).click();
  await inbox.expectDecided(/approved by lead@e2e\.test/);
  const request = await (await agent.api.get(`/api/v1/requests/${requestId}`)).json();
  expect(request).toMatchObject({ response: { editedPlan: "1. clear build/cache only" } });
});

test("other tools are edited as JSON, with a clear error for JSON that is not valid", async ({
  browser,
}) => {
  const { inbox } = await signedInPage(browser);
  const lead = await humanApi();
  // A connected Claude Code session: its Write needs the Lead's approval of that exact call.
  const connectToken = await lead.post("/api/v1/tokens", {
    data: { name: uniqueAgentName("connect"), scope: "connect" },
  });
  expect(connectToken.status(), await connectToken.text()).toBe(201);
  const cwd = `/home/ada/${uniqueAgentName("project")}`;
  const connected = await lead.post("/api/v1/connect/sessions", {
    headers: { authorization: `Bearer ${(await connectToken.json()).token}` },
    data: { sessionId: crypto.randomUUID(), cwd },
  });
  expect(connected.status(), await connected.text()).toBe(201);
  const { agent, token } = (await connected.json()) as { agent: { name: string }; token: string };
  const session = await agentApi(token);
  const call = { tool: "Write", args: { file_path: `${cwd}/notes.md`, content: "draft" }, cwd };
  const asked = await (await session.post("/api/v1/tool-calls", { data: call })).json();
  expect(asked.code).toBe("TOOL_APPROVAL_REQUIRED");

  await inbox.select(agent.name, "Risky tool call");
  const detail = inbox.detail();
  await detail.getByRole("button", { name: "Edit call" }).click();
  const json = detail.getByLabel("Edited arguments (JSON)");
  expect(JSON.parse(await json.inputValue())).toEqual(call.args);
  await json.fill("{ file_path: nope");
  await detail.getByRole("button", { name: "Approve edited" }).click();
  await expect(detail.getByRole("alert")).toContainText("Not valid JSON");
  await expect(json).toHaveAttribute("aria-invalid", "true");
  await json.fill("[1, 2]");
  await detail.getByRole("button", { name: "Approve edited" }).click();
  await expect(detail.getByRole("alert")).toContainText("must be a JSON object");
  const edited = { file_path: `${cwd}/notes.md`, content: "final" };
  await json.fill(JSON.stringify(edited));
  await detail.getByRole("button", { name: "Approve edited" }).click();
  await inbox.expectDecided(/approved by lead@e2e\.test/);

  const retry = await (
    await session.post("/api/v1/tool-calls", { data: { ...call, canRunEdits: true } })
  ).json();
  expect(retry).toEqual({ allowed: true, requestId: asked.requestId, args: edited });
});
