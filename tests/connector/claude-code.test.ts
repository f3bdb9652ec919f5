import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { claudeCodeBinary, installClaudeCode } from "../../scripts/install-claude-code";
import {
  isReportingToolResults,
  replyWithText,
  replyWithToolUse,
  startAnthropicStub,
  toolResultsOf,
  type AnthropicStub,
} from "../support/anthropic-stub";
import {
  DOWN_URL,
  ensureCliBundle,
  runCli,
  startHandshake,
  type Handshake,
} from "../support/handshake-cli";
import { makeTempDir } from "../support/temp-dirs";

// The "must show": the real Claude Code CLI (2.1.328, native binary, from the fixture
// cache), headless and offline against a loopback Anthropic stub, with `handshake claude-code
// install` run in its project. The model asks for one Bash call that writes a file.
const API_KEY = "sk-ant-stub-key";
const WRITTEN_FILE = "made-by-claude.txt";
/** The prompt under which the model asks for a command the Lead edits before approving. */
const EDIT_PROMPT = "Write the original marker.";
const EDITED_FILE = "out.txt";

let handshake: Handshake;
let stub: AnthropicStub;
/** The one tool call the stub's model asks for; a test may swap it for its own. */
const GREETING_CALL = {
  name: "Bash",
  input: { command: `echo hello > ${WRITTEN_FILE}`, description: "Write the greeting file" },
};
let scriptedCall: { name: string; input: Record<string, unknown> } = GREETING_CALL;

beforeAll(async () => {
  installClaudeCode();
  await ensureCliBundle();
  handshake = await startHandshake();
  stub = await startAnthropicStub({
    apiKey: API_KEY,
    respond: (request) => {
      // Requests without tools are Claude Code's side requests (titles, summaries).
      if (!request.body.tools?.length) return replyWithText("ok");
      if (isReportingToolResults(request)) return replyWithText("Done.");
      if (JSON.stringify(request.body.messages[0]).includes(EDIT_PROMPT)) {
        return replyWithToolUse("Bash", {
          command: `echo original > ${EDITED_FILE}`,
          description: "Write the marker",
        });
      }
      return replyWithToolUse(scriptedCall.name, scriptedCall.input);
    },
  });
}, 180_000);

afterAll(async () => {
  await stub?.close();
  await handshake?.stop();
  await getDb().$disconnect();
});

type Project = { dir: string; home: string };

/** A temporary project and HOME, with Handshake installed for Claude Code by the CLI itself. */
async function installedProject(url: string): Promise<Project> {
  const root = await makeTempDir("handshake-claude-");
  const dir = path.join(root, "greeter");
  const home = path.join(root, "home");
  await mkdir(dir);
  await mkdir(home);
  const install = await runCli(
    ["claude-code", "install", "--url", url, "--token", handshake.connect.token, "--dir", dir],
    { env: { HOME: home } },
  );
  expect(install.code, install.stderr).toBe(0);
  return { dir, home };
}

type ClaudeRun = { code: number | null; output: { permission_denials?: unknown[] } };

function runClaude(
  project: Project,
  prompt = "Write the greeting file.",
  options: string[] = [],
): Promise<ClaudeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(claudeCodeBinary(), ["-p", prompt, "--output-format", "json", ...options], {
      cwd: project.dir,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        NODE_ENV: "test",
        PATH: process.env.PATH ?? "",
        HOME: project.home,
        ANTHROPIC_BASE_URL: stub.url,
        ANTHROPIC_API_KEY: API_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve({
          code,
          output: JSON.parse(stdout) as ClaudeRun["output"],
        });
      } catch {
        reject(new Error(`claude printed no JSON (exit ${code}): ${stdout}\n${stderr}`));
      }
    });
  });
}

/** The tool approval the hook raised for this project's session, once it is on the Lead's board. */
async function pendingApproval(project: Project): Promise<{ id: string; payload: unknown }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const request = await getDb().request.findFirst({
      where: {
        type: "tool_approval",
        status: "pending",
        agent: { connector: { path: ["cwd"], equals: project.dir } },
      },
    });
    if (request) return request;
    if (Date.now() > deadline) throw new Error(`no pending tool approval for ${project.dir}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function toolResultsSince(index: number) {
  return stub.requests.slice(index).flatMap(toolResultsOf);
}

describe("the real Claude Code CLI behind Handshake", () => {
  it("runs the Bash command once the Lead approves it", async () => {
    const project = await installedProject(handshake.url);
    const running = runClaude(project);
    const request = await pendingApproval(project);
    expect(request.payload).toMatchObject({
      tool: "Bash",
      args: { command: `echo hello > ${WRITTEN_FILE}` },
    });
    await handshake.lead.decide(request.id, { type: "tool_approval_response", approve: true });
    const run = await running;
    expect(run.code).toBe(0);
    expect(existsSync(path.join(project.dir, WRITTEN_FILE))).toBe(true);
    expect(run.output.permission_denials ?? []).toEqual([]);
  }, 120_000);

  it("runs the Lead's edited command instead of the model's", async () => {
    const project = await installedProject(handshake.url);
    const running = runClaude(project, EDIT_PROMPT);
    const request = await pendingApproval(project);
    expect(request.payload).toMatchObject({
      args: { command: `echo original > ${EDITED_FILE}` },
    });
    await handshake.lead.decide(request.id, {
      type: "tool_approval_response",
      approve: true,
      editedArgs: { command: `echo edited > ${EDITED_FILE}` },
    });
    const run = await running;
    expect(run.code).toBe(0);
    expect(await readFile(path.join(project.dir, EDITED_FILE), "utf8")).toBe("edited\n");
    expect(run.output.permission_denials ?? []).toEqual([]);
  }, 120_000);

  it("does not run it when the Lead rejects, and the model receives the Lead's feedback", async () => {
    const project = await installedProject(handshake.url);
    const seen = stub.requests.length;
    const running = runClaude(project);
    const request = await pendingApproval(project);
    await handshake.lead.decide(request.id, {
      type: "tool_approval_response",
      approve: false,
      feedback: "not in this repository, write to /tmp instead",
    });
    const run = await running;
    expect(existsSync(path.join(project.dir, WRITTEN_FILE))).toBe(false);
    expect(run.output.permission_denials).toHaveLength(1);
    const results = toolResultsSince(seen);
    expect(results.some((result) => result.text.includes("write to /tmp instead"))).toBe(true);
  }, 120_000);

  it("a Write's card carries the diff; a file changed before the approval is used: FILE_CHANGED", async () => {
    const project = await installedProject(handshake.url);
    const notes = path.join(project.dir, "NOTES.md");
    scriptedCall = { name: "Write", input: { file_path: notes, content: "# Notes\n" } };
    try {
      const seen = stub.requests.length;
      const running = runClaude(project);
      const request = await pendingApproval(project);
      expect(request.payload).toMatchObject({
        tool: "Write",
        file: { path: notes, baseHash: "absent", before: "", after: "# Notes\n" },
      });
      // Another process writes the file while the card waits: the approval must not cover it.
      await writeFile(notes, "someone else's notes\n");
      await handshake.lead.decide(request.id, { type: "tool_approval_response", approve: true });
      const run = await running;
      expect(await readFile(notes, "utf8")).toBe("someone else's notes\n");
      expect(run.output.permission_denials).toHaveLength(1);
      expect(toolResultsSince(seen).some((result) => result.text.includes("FILE_CHANGED"))).toBe(
        true,
      );
    } finally {
      scriptedCall = GREETING_CALL;
    }
  }, 120_000);

  // Red team: Claude Code trims a Glob's or Grep's `path`, then expands its `~`, after the hook
  // has seen it as the model wrote it. ` ~/.ssh` read as a directory in the session's, and the
  // key was listed at once.
  it("a Glob path padded with a space is the home's: it waits for the Lead", async () => {
    const project = await installedProject(handshake.url);
    await mkdir(path.join(project.home, ".ssh"));
    await writeFile(path.join(project.home, ".ssh", "id_rsa"), "KEY\n");
    scriptedCall = { name: "Glob", input: { pattern: "*", path: " ~/.ssh" } };
    try {
      const seen = stub.requests.length;
      // Claude Code 2.1.328 offers Glob only when the launch names it.
      const running = runClaude(project, "List the keys.", ["--allowedTools", "Glob"]);
      const request = await pendingApproval(project);
      expect(request.payload).toMatchObject({ tool: "Glob", args: { path: " ~/.ssh" } });
      await handshake.lead.decide(request.id, {
        type: "tool_approval_response",
        approve: false,
        feedback: "not the home directory",
      });
      const run = await running;
      expect(run.output.permission_denials).toHaveLength(1);
      expect(toolResultsSince(seen).some((result) => result.text.includes("id_rsa"))).toBe(false);
    } finally {
      scriptedCall = GREETING_CALL;
    }
  }, 120_000);

  // What the Lead approves is the whole call: an argument the edit leaves out must not run. Claude
  // Code 2.1.328 replaces the model's input with the hook's `updatedInput` (were it to merge them,
  // the model's `run_in_background` would outlive the Lead's edit that took it out).
  it("an argument the Lead's edit leaves out is gone: the model's run_in_background does not run", async () => {
    const project = await installedProject(handshake.url);
    scriptedCall = {
      name: "Bash",
      input: {
        command: "echo original > original.txt",
        description: "Start it",
        run_in_background: true,
      },
    };
    try {
      const seen = stub.requests.length;
      const running = runClaude(project);
      const request = await pendingApproval(project);
      await handshake.lead.decide(request.id, {
        type: "tool_approval_response",
        approve: true,
        editedArgs: { command: "echo edited in the foreground", description: "Start it" },
      });
      const run = await running;
      expect(run.output.permission_denials ?? []).toEqual([]);
      const [result] = toolResultsSince(seen);
      expect(result?.text).toBe("edited in the foreground");
    } finally {
      scriptedCall = GREETING_CALL;
    }
  }, 120_000);

  // `cat <&3` and `cat /dev/fd/3` are reads of no path, so they run at once: harmless only while
  // Claude Code's Bash inherits no descriptor beyond the three standard ones (its own process holds
  // sockets, an inotify and whatever its launcher leaked). `ls` adds one of its own: the folder.
  it("the Bash tool inherits no descriptor beyond stdin, stdout and stderr", async () => {
    const project = await installedProject(handshake.url);
    scriptedCall = { name: "Bash", input: { command: "ls /dev/fd/", description: "List them" } };
    try {
      const seen = stub.requests.length;
      const running = runClaude(project);
      // Listing /dev/fd is a read outside the project: the Lead lets it run.
      const request = await pendingApproval(project);
      await handshake.lead.decide(request.id, { type: "tool_approval_response", approve: true });
      const run = await running;
      expect(run.output.permission_denials ?? []).toEqual([]);
      const [result] = toolResultsSince(seen);
      expect(result?.text.split("\n")).toEqual(["0", "1", "2", "3"]);
    } finally {
      scriptedCall = GREETING_CALL;
    }
  }, 120_000);

  it("denies at once when the server is down", async () => {
    const project = await installedProject(DOWN_URL);
    const seen = stub.requests.length;
    const run = await runClaude(project);
    expect(existsSync(path.join(project.dir, WRITTEN_FILE))).toBe(false);
    expect(run.output.permission_denials).toHaveLength(1);
    // Denied for that reason, not by waiting out the hour-long deadline on a dead server.
    expect(toolResultsSince(seen).some((result) => /unreachable/.test(result.text))).toBe(true);
  }, 120_000);
});
