import AxeBuilder from "@axe-core/playwright";
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test, type APIRequestContext } from "@playwright/test";
import {
  replyWithText,
  replyWithToolUse,
  startAnthropicStub,
  toolResultsOf,
  type AnthropicStub,
} from "../tests/support/anthropic-stub";
import { E2E_MODEL_STUB } from "./support/accounts";
import { agentApi, humanApi, uniqueAgentName } from "./support/api";
import { closeSignedInPages, signedInPage } from "./support/sign-in";

// Issue 15, "real diffs and a TOCTOU guard": the card of a file-writing call shows its unified,
// highlighted diff; the approval binds the file's base hash, so a file changed underneath is
// refused with FILE_CHANGED and the agent asks again with a new card.
const WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

test.afterEach(closeSignedInPages);

/** A Claude Code session connected through the API, as the connector's hook would connect it. */
async function connectedSession(lead: APIRequestContext, cwd: string) {
  const minted = await lead.post("/api/v1/tokens", {
    data: { name: uniqueAgentName("connect"), scope: "connect" },
  });
  expect(minted.status(), await minted.text()).toBe(201);
  const connector = await agentApi(String(((await minted.json()) as { token: string }).token));
  const connected = await connector.post("/api/v1/connect/sessions", {
    data: { sessionId: randomUUID(), cwd },
  });
  expect(connected.status(), await connected.text()).toBe(201);
  const { agent, token } = (await connected.json()) as { agent: { name: string }; token: string };
  return { name: agent.name, api: await agentApi(token) };
}

/** The hook's PreToolUse call for a Write over a file that holds `before`. */
function writeCall(cwd: string, before: string, after: string) {
  return {
    tool: "Write",
    args: { file_path: "src/app.ts", content: after },
    cwd,
    file: { path: "src/app.ts", baseHash: sha256(before), before, after },
  };
}

test("a connected session's Write shows its diff; a file changed after the approval is refused with FILE_CHANGED", async ({
  browser,
}) => {
  test.setTimeout(60_000);
  const cwd = "/home/e2e/site";
  const lead = await humanApi();
  const session = await connectedSession(lead, cwd);
  const before = 'export const limit = 10;\nexport const name = "site";\n';
  const after = 'export const limit = 20;\nexport const name = "site";\n';
  const asked = await session.api.post("/api/v1/tool-calls", {
    data: writeCall(cwd, before, after),
  });
  const askedVerdict = (await asked.json()) as { code: string; requestId: string };
  expect(askedVerdict.code).toBe("TOOL_APPROVAL_REQUIRED");

  const { page, inbox } = await signedInPage(browser);
  await inbox.select(session.name, "Risky tool call");
  const diff = inbox.detail().getByRole("region", { name: "Changes to src/app.ts" });
  await expect(diff).toContainText("1 line added, 1 line removed");
  const removed = diff.locator('[data-diff-line="removed"]');
  const added = diff.locator('[data-diff-line="added"]');
  await expect(removed).toHaveText(/removed\s*export const limit = 10;/);
  await expect(added).toHaveText(/added\s*export const limit = 20;/);
  // Highlighted as TypeScript, by class names the stylesheet colours (the CSP allows no inline style).
  await expect(added.locator(".hljs-keyword").first()).toHaveText("export");
  const { violations } = await new AxeBuilder({ page })
    .include("article")
    .withTags(WCAG_21_AA)
    .analyze();
  expect(violations.map((violation) => violation.id)).toEqual([]);

  await inbox.approve();
  await inbox.expectDecided(/approved/i);

  // The file changed between the approval and the hook's retry.
  const changed = 'export const limit = 99;\nexport const name = "site";\n';
  const retry = await session.api.post("/api/v1/tool-calls", {
    data: writeCall(cwd, changed, after),
  });
  expect(await retry.json()).toMatchObject({ allowed: false, code: "FILE_CHANGED" });

  // Asked again: a new card, with the diff against the file as it is now.
  const again = await session.api.post("/api/v1/tool-calls", {
    data: writeCall(cwd, changed, after),
  });
  const againVerdict = (await again.json()) as { code: string; requestId: string };
  expect(againVerdict.code).toBe("TOOL_APPROVAL_REQUIRED");
  // The decided card stays on screen, updated in place, until the Lead moves on.
  await inbox.goto();
  await inbox.select(session.name, "Risky tool call");
  await expect(inbox.detail()).toContainText(againVerdict.requestId);
  await expect(
    inbox
      .detail()
      .getByRole("region", { name: "Changes to src/app.ts" })
      .locator('[data-diff-line="removed"]'),
  ).toHaveText(/export const limit = 99;/);

  // History keeps the approved diff behind a disclosure.
  await page.goto("/history");
  const row = page.locator(`tr[data-request-id="${askedVerdict.requestId}"]`);
  await row.getByText("Show the diff of").click();
  await expect(row.locator('[data-diff-line="added"]')).toHaveText(/export const limit = 20;/);
  const history = await new AxeBuilder({ page }).include("table").withTags(WCAG_21_AA).analyze();
  expect(history.violations.map((violation) => violation.id)).toEqual([]);
});

/** The worker's workspace, in the e2e server's data folder (a temporary folder of its own). */
async function workspaceOf(agent: string): Promise<string> {
  for (const entry of await readdir(tmpdir())) {
    const candidate = path.join(tmpdir(), entry, "workspaces", agent);
    if (entry.startsWith("handshake-e2e-") && existsSync(candidate)) return candidate;
  }
  throw new Error(`no workspace for ${agent}`);
}

test.describe("a worker's write_file under an ask rule", () => {
  let stub: AnthropicStub;
  const agentName = uniqueAgentName("e2e-writer");
  const WRITE = { path: "greeting.txt", content: "hello v2\n" };

  test.beforeAll(async () => {
    // The real worker's Anthropic model: it seeds the file with bash, asks to rewrite it, and runs
    // the write again when told the Lead approved it.
    stub = await startAnthropicStub({
      apiKey: E2E_MODEL_STUB.apiKey,
      port: E2E_MODEL_STUB.port,
      respond: (request) => {
        const conversation = JSON.stringify(request.body.messages);
        if (!conversation.includes(agentName) || !request.body.tools?.length) {
          return replyWithText("ok");
        }
        if (conversation.includes("FILE_CHANGED")) return replyWithText("The file changed.");
        if (conversation.includes("approved: run it again")) {
          return replyWithToolUse("write_file", WRITE, { id: "toolu_write_2" });
        }
        if (conversation.includes("toolu_write_1")) return replyWithText("Waiting for the Lead.");
        if (conversation.includes("toolu_seed")) {
          return replyWithToolUse("write_file", WRITE, { id: "toolu_write_1" });
        }
        return replyWithToolUse(
          "bash",
          { command: "printf 'hello v1\\n' > greeting.txt" },
          { id: "toolu_seed" },
        );
      },
    });
  });

  test.afterAll(async () => {
    await stub.close();
  });

  test("the diff is shown, the file changes underneath, and the write is refused", async ({
    browser,
  }) => {
    test.setTimeout(90_000);
    const lead = await humanApi();
    // Rules arrive with the rules work (issue 15); until then there is no `ask` rule to make.
    const rule = await lead.post("/api/v1/rules", {
      data: {
        pattern: "write_file(**)",
        effect: "ask",
        // Everyone, so the rule exists before the worker's first call; removed at the end.
        scope: { kind: "everyone" },
        mode: "enforce",
      },
    });
    test.skip(rule.status() === 404, "POST /api/v1/rules is not on this build yet");
    expect(rule.status(), await rule.text()).toBe(201);
    const ruleId = String(((await rule.json()) as { id: string }).id);
    try {
      const registered = await lead.post("/api/v1/agents", {
        data: {
          name: agentName,
          role: "writer",
          prompt: `You are ${agentName}. Update greeting.txt.`,
          requirePlan: false,
          worker: { model: "anthropic" },
        },
      });
      expect(registered.status(), await registered.text()).toBe(201);

      const { inbox } = await signedInPage(browser);
      await expect(inbox.requestItem(agentName, "Risky tool call")).toBeVisible({
        timeout: 30_000,
      });
      await inbox.select(agentName, "Risky tool call");
      const diff = inbox.detail().getByRole("region", { name: "Changes to greeting.txt" });
      await expect(diff.locator('[data-diff-line="removed"]')).toHaveText(/hello v1/);
      await expect(diff.locator('[data-diff-line="added"]')).toHaveText(/hello v2/);

      const file = path.join(await workspaceOf(agentName), "greeting.txt");
      await writeFile(file, "changed underneath\n");
      await inbox.approve();

      await expect
        .poll(
          () =>
            stub.requests
              .flatMap(toolResultsOf)
              .some(
                (result) =>
                  result.toolUseId === "toolu_write_2" && result.text.includes("FILE_CHANGED"),
              ),
          { timeout: 30_000 },
        )
        .toBe(true);
      expect(await readFile(file, "utf8")).toBe("changed underneath\n");
    } finally {
      await lead.delete(`/api/v1/rules/${ruleId}`);
    }
  });
});
