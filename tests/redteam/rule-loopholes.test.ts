import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { callRoute } from "../route-client";
import { api, createToken, lead, registerAgent, uniqueName } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

type Scope = Record<string, string>;

async function makeRule(pattern: string, effect: string, scope: Scope): Promise<void> {
  const created = await callRoute(rulesRoute.POST, {
    path: "/api/v1/rules",
    body: { pattern, effect, scope },
    headers: (await lead()).headers,
  });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
}

/** A connected session in a project of its own, its rules scoped to its connect token. */
async function connectedSession() {
  const connect = await createToken("connect");
  const project = `/home/ada/${uniqueName("proj")}`;
  const session = await api.connectSession(connect.headers, {
    sessionId: randomUUID(),
    cwd: project,
  });
  const headers = { authorization: `Bearer ${String(session.json.token)}` };
  return {
    project,
    scope: { kind: "token", tokenId: connect.id },
    call: async (tool: string, args: Record<string, unknown>, cwd?: string) =>
      (await api.toolCall(headers, { tool, args, ...(cwd ? { cwd } : {}) })).json,
  };
}

const CARD = { allowed: false, code: "TOOL_APPROVAL_REQUIRED" };

/** In a session with these allow rules, each `allowed` command runs at once, each `carded` asks. */
async function expectAllowRulesToDraw(
  rules: readonly string[],
  allowed: readonly string[],
  carded: readonly string[],
): Promise<void> {
  const { call, scope } = await connectedSession();
  for (const rule of rules) await makeRule(rule, "allow", scope);
  for (const command of allowed) {
    expect(await call("Bash", { command }), command).toMatchObject({ allowed: true });
  }
  for (const command of carded) {
    expect(await call("Bash", { command }), command).toMatchObject(CARD);
  }
}
const DENIED = { allowed: false, code: "RULE_DENIED" };

/** Red team, round eight: calls a rule's author would not have let through, let through. */
describe("rule loopholes (red team)", () => {
  it("an allow covers no loop that sets a variable, as it covers no assignment before a command", async () => {
    // `for HOME in docs; do git status; done` ran git with HOME=docs, whose .gitconfig (written
    // under another allow) named a command for core.fsmonitor: run at once, with no card.
    const { call, scope } = await connectedSession();
    await makeRule("Bash(git status*)", "allow", scope);
    expect(await call("Bash", { command: "git status" })).toMatchObject({ allowed: true });
    for (const command of [
      "HOME=docs git status",
      "for HOME in docs; do git status; done",
      "for HOME in docs\ndo git status\ndone",
      "select PATH in /tmp/x; do git status; done",
    ]) {
      expect(await call("Bash", { command }), command).toMatchObject(CARD);
    }
  });

  it("a deny matches its command behind the runners it did not know", async () => {
    const worker = await registerAgent();
    await makeRule("bash(rm *)", "deny", { kind: "agent", agent: worker.name });
    await makeRule("bash(git push*)", "ask", { kind: "agent", agent: worker.name });
    const bash = async (command: string) =>
      (await api.toolCall(worker.headers, { tool: "bash", args: { command } })).json;
    for (const command of [
      "linux64 rm -rf build",
      "setarch x86_64 rm -rf build",
      "choom -n 0 -- rm -rf build",
      "ssh-agent rm -rf build",
      "sg users 'rm -rf build'",
    ]) {
      expect(await bash(command), command).toMatchObject(DENIED);
    }

    const { call, scope } = await connectedSession();
    await makeRule("Bash(uv run *)", "allow", scope);
    await makeRule("Bash(git push*)", "deny", scope);
    await makeRule("Bash(rm *)", "deny", scope);
    for (const command of [
      "uv run git push --force origin main",
      "uv run rm -rf src",
      "uv --quiet run sudo git push",
      "caffeinate -i rm -rf src",
      "noglob rm -rf src",
      "=rm -rf src",
    ]) {
      expect(await call("Bash", { command }), command).toMatchObject(DENIED);
    }
  });

  it("the gate sees through the runners too: no plan-approved worker pushes behind linux64", async () => {
    const worker = await registerAgent();
    for (const command of ["git push --force", "linux64 git push --force"]) {
      const verdict = await api.toolCall(worker.headers, { tool: "bash", args: { command } });
      expect(verdict.json, command).toMatchObject(CARD);
    }
  });

  it("no allow, however broad its glob, covers a file that makes programs run later", async () => {
    // Write(**/*.json) let a session rewrite .claude/settings.json, the hooks that gate it.
    const { call, scope } = await connectedSession();
    await makeRule("Write(**/*.json)", "allow", scope);
    await makeRule("Edit(**/*.md)", "allow", scope);
    expect(await call("Write", { file_path: "src/data.json", content: "{}" })).toMatchObject({
      allowed: true,
    });
    for (const file_path of [".claude/settings.json", ".claude/settings.local.json", ".mcp.json"]) {
      expect(await call("Write", { file_path, content: "{}" }), file_path).toMatchObject(CARD);
    }
    for (const file_path of [".claude/agents/helper.md", ".claude/commands/x.md"]) {
      const edit = { file_path, old_string: "a", new_string: "b" };
      expect(await call("Edit", edit), file_path).toMatchObject(CARD);
    }
  });

  it("no allow of a command covers one that names such a file, written through an option", async () => {
    // Round nine: under Bash(git log:*), git log's --output wrote .git/config (core.fsmonitor
    // runs at the next git status) and Claude Code's settings (a hook this gate never sees).
    const { call, scope } = await connectedSession();
    await makeRule("Bash(git log:*)", "allow", scope);
    await makeRule("Bash(sort:*)", "allow", scope);
    expect(await call("Bash", { command: "git log -1 --oneline" })).toMatchObject({
      allowed: true,
    });
    for (const command of [
      `git log -1 --format='[core]%nfsmonitor = "touch PWNED; false"' --output=.git/config`,
      `git log -1 --format='{"hooks":{}}' --output=.claude/settings.json`,
      "git log -1 --output .husky/pre-commit",
      "sort -o.mcp.json notes.txt",
      "sort -o .config/git/config notes.txt",
      "git log -1 --output=.GIT/config",
    ]) {
      expect(await call("Bash", { command }), command).toMatchObject(CARD);
    }
  });

  it("no allow of a reading command covers a write or a program run through its options", async () => {
    // Round ten: under Bash(git log:*), `--format` wrote any text and `--output` put it in any file
    // of the project (a Makefile, .envrc, package.json's scripts), and under Bash(rg:*) `--pre` ran
    // a script of the project: at once, unsandboxed, with no card.
    await expectAllowRulesToDraw(
      ["Bash(git log:*)", "Bash(sort:*)", "Bash(rg:*)"],
      ["git log -1", "git log --oneline -5 -- src", "sort notes.txt"],
      [
        "git log -1 --format='all:%n%x09touch PWNED' --output=Makefile",
        "git log -1 --format='export X=1' --output .envrc",
        "git log -1 --out=package.json",
        "git show --output=.vscode/tasks.json",
        "sort -o .npmrc notes.txt",
        "sort notes.txt -oMakefile",
        "rg --pre=./scan.sh TODO src",
      ],
    );
  });

  it("an escaped space hides no command from an allow, nor a `{name}` redirection a variable", async () => {
    // Round ten: the parse dropped `\ ` and read `#; …` as a comment, where bash and zsh read a
    // word ` #` and run what follows the `;`; and zsh set PATH from `ls {PATH}>/dev/null` before
    // it looked `ls` up, which ran `./12/ls`.
    await expectAllowRulesToDraw(
      ["Bash(ls:*)", "Bash(npm test:*)", "Bash(git status)"],
      ["ls -la", "npm test", "git status"],
      [
        "ls -la \\ # list; cat ~/.ssh/id_rsa",
        "npm test \\ #; rm -rf ~",
        "git status \\ #; git push --force origin main",
        "ls {PATH}>/dev/null",
      ],
    );
  });

  it("a relative path from a shell above the project is not the project's path", async () => {
    const { call, project, scope } = await connectedSession();
    await makeRule("Write(src/**)", "allow", scope);
    const write = { file_path: "src/a.ts", content: "x" };
    expect(await call("Write", write)).toMatchObject({ allowed: true });
    expect(await call("Write", write, `${project}/lib`)).toMatchObject(CARD);
    expect(await call("Write", write, project.replace(/\/[^/]+$/, ""))).toMatchObject(CARD);
  });

  it("a deny of Read or Edit speaks for the tools of its family", async () => {
    const { call, scope } = await connectedSession();
    await makeRule("Read(.env)", "deny", scope);
    await makeRule("Edit(.env)", "deny", scope);
    const grep = (path?: string) => ({
      pattern: ".",
      output_mode: "content",
      ...(path ? { path } : {}),
    });
    expect(await call("Grep", grep(".env"))).toMatchObject(DENIED);
    expect(await call("Grep", grep())).toMatchObject(DENIED);
    expect(await call("Glob", { pattern: "*", path: "." })).toMatchObject(DENIED);
    expect(await call("Grep", grep("src"))).toMatchObject({ allowed: true });
    expect(await call("Write", { file_path: ".env", content: "x" })).toMatchObject(DENIED);
    expect(await call("MultiEdit", { file_path: ".env", edits: [] })).toMatchObject(DENIED);
    expect(await call("Write", { file_path: "src/.env", content: "x" })).toMatchObject(CARD);
  });
});
