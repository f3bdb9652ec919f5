import { randomUUID } from "node:crypto";
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveConnection } from "../../bin/cli/config";
import { getDb } from "../../lib/db";
import { api, createToken, lead } from "../api/fixtures";
import { makeTempDir } from "../support/temp-dirs";
import {
  DOWN_URL,
  ensureCliBundle,
  newConfigDir,
  pendingRequestOf,
  runCli,
  startHandshake,
  type Handshake,
} from "../support/handshake-cli";

let handshake: Handshake;

beforeAll(async () => {
  await ensureCliBundle();
  handshake = await startHandshake();
}, 60_000);

afterAll(async () => {
  await handshake.stop();
  await getDb().$disconnect();
});

/** Hook input as Claude Code 2.1.328 sends it (recorded), with a fresh session. */
function hookInput<T extends Record<string, unknown>>(
  event: string,
  fields: T = {} as T,
): T & { session_id: string; hook_event_name: string } {
  return {
    session_id: randomUUID(),
    transcript_path: "/tmp/transcript.jsonl",
    cwd: "/home/ada/src/api-server",
    prompt_id: randomUUID(),
    permission_mode: "default",
    hook_event_name: event,
    ...fields,
  };
}

const exitPlanMode = (plan: string) =>
  hookInput("PermissionRequest", {
    permission_mode: "plan",
    tool_name: "ExitPlanMode",
    tool_input: { plan, planFilePath: "/tmp/.claude/plans/plan.md" },
    permission_suggestions: [],
  });

async function configFor(url: string, token: string): Promise<string> {
  const dir = await newConfigDir();
  const previous = process.env.HANDSHAKE_CONFIG_DIR;
  process.env.HANDSHAKE_CONFIG_DIR = dir;
  await saveConnection({ url, token });
  process.env.HANDSHAKE_CONFIG_DIR = previous;
  return dir;
}

function hook(configDir: string, input: unknown, timeoutSeconds = 60) {
  return runCli(["claude-code", "hook", "--timeout", String(timeoutSeconds)], {
    input: JSON.stringify(input),
    env: { HANDSHAKE_CONFIG_DIR: configDir },
  });
}

function decisionOf(stdout: string) {
  return (JSON.parse(stdout) as { hookSpecificOutput: Record<string, unknown> }).hookSpecificOutput;
}

describe("handshake claude-code hook: PreToolUse", () => {
  it("allows a read-only call at once, as the session's agent, and caches its token 0600", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = hookInput("PreToolUse", { tool_name: "Read", tool_input: { file_path: "a.ts" } });
    const run = await hook(configDir, input);
    expect(run.code, run.stderr).toBe(0);
    expect(decisionOf(run.stdout)).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
    });
    const cached = await readdir(path.join(configDir, "agents"));
    expect(cached).toHaveLength(1);
    expect((await stat(path.join(configDir, "agents", cached[0] ?? ""))).mode & 0o777).toBe(0o600);
    const agent = await getDb().agent.findFirstOrThrow({
      where: { connector: { path: ["sessionId"], equals: input.session_id } },
    });
    expect(agent.toolHost).toBe("external");
  });

  it("waits for the Lead on a writing call, then allows it once approved", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = hookInput("PreToolUse", {
      tool_name: "Bash",
      tool_input: { command: "touch built.txt" },
    });
    const running = hook(configDir, input);
    const request = await pendingRequestOf(input.session_id, "tool_approval");
    await handshake.lead.decide(request.id, { type: "tool_approval_response", approve: true });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(decisionOf(run.stdout).permissionDecision).toBe("allow");
  });

  it("returns the Lead's edited call as updatedInput with the allow", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = hookInput("PreToolUse", {
      tool_name: "Bash",
      tool_input: { command: "rm -rf dist", description: "clean" },
    });
    const running = hook(configDir, input);
    const request = await pendingRequestOf(input.session_id, "tool_approval");
    const editedArgs = { command: "rm -rf dist/cache", description: "clean the cache only" };
    await handshake.lead.decide(request.id, {
      type: "tool_approval_response",
      approve: true,
      editedArgs,
    });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(decisionOf(run.stdout)).toMatchObject({
      permissionDecision: "allow",
      updatedInput: editedArgs,
    });
  });

  it("denies with the Lead's feedback when the Lead rejects", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = hookInput("PreToolUse", {
      tool_name: "Write",
      tool_input: { file_path: "/home/ada/src/api-server/x", content: "x" },
    });
    const running = hook(configDir, input);
    const request = await pendingRequestOf(input.session_id, "tool_approval");
    await handshake.lead.decide(request.id, {
      type: "tool_approval_response",
      approve: false,
      feedback: "write it under src/ instead",
    });
    const decision = decisionOf((await running).stdout);
    expect(decision.permissionDecision).toBe("deny");
    expect(decision.permissionDecisionReason).toContain("write it under src/ instead");
  });

  it("denies when the deadline passes without a decision, saying so", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = hookInput("PreToolUse", { tool_name: "Bash", tool_input: { command: "make" } });
    const run = await hook(configDir, input, 5);
    const decision = decisionOf(run.stdout);
    expect(decision.permissionDecision).toBe("deny");
    expect(decision.permissionDecisionReason).toMatch(/deadline passed/);
  });

  it("denies when the server is unreachable, saying so", async () => {
    const configDir = await configFor(DOWN_URL, handshake.connect.token);
    const run = await hook(
      configDir,
      hookInput("PreToolUse", { tool_name: "Read", tool_input: {} }),
    );
    expect(run.code).toBe(0);
    const decision = decisionOf(run.stdout);
    expect(decision.permissionDecision).toBe("deny");
    expect(decision.permissionDecisionReason).toMatch(/unreachable/);
  });

  it("denies when the connect token is refused, and when it is revoked after the agent was cached", async () => {
    const wrong = await configFor(handshake.url, "hs_lead_not_a_real_token_at_all_000000");
    const refused = decisionOf(
      (await hook(wrong, hookInput("PreToolUse", { tool_name: "Read", tool_input: {} }))).stdout,
    );
    expect(refused.permissionDecision).toBe("deny");
    expect(refused.permissionDecisionReason).toMatch(/refused the connect token/);

    const connect = await createToken("connect");
    const configDir = await configFor(handshake.url, connect.token);
    const input = hookInput("PreToolUse", { tool_name: "Read", tool_input: { file_path: "a.ts" } });
    expect(decisionOf((await hook(configDir, input)).stdout).permissionDecision).toBe("allow");
    await api.revokeToken((await lead()).headers, connect.id);
    const revoked = decisionOf((await hook(configDir, input)).stdout);
    expect(revoked.permissionDecision).toBe("deny");
    expect(revoked.permissionDecisionReason).toMatch(/refused/);
  });

  it("denies when Handshake was never installed", async () => {
    const run = await hook(
      await newConfigDir(),
      hookInput("PreToolUse", { tool_name: "Read", tool_input: {} }),
    );
    expect(decisionOf(run.stdout).permissionDecisionReason).toMatch(/claude-code install/);
  });

  it("denies a call whose input holds a __proto__ key, which the server would never have seen", async () => {
    // Parsing dropped the key, the server judged the rest, and Claude Code ran the tool with it.
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = hookInput("PreToolUse", {
      tool_name: "Read",
      tool_input: JSON.parse('{"file_path":"a.ts","__proto__":{"file_path":"/etc/shadow"}}'),
    });
    const run = await hook(configDir, input);
    expect(run.code, run.stderr).toBe(0);
    expect(decisionOf(run.stdout)).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringMatching(
        /^Handshake cannot judge this call's input \(tool_input: a __proto__ key is not allowed/,
      ),
    });
  });

  it("fails closed with exit 2 on input it cannot understand", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const run = await runCli(["claude-code", "hook"], {
      input: "not json",
      env: { HANDSHAKE_CONFIG_DIR: configDir },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/blocked/);
  });
});

describe("handshake claude-code hook: PermissionRequest on ExitPlanMode", () => {
  it("approves with the exact JSON Claude Code obeys, echoing the tool input", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = exitPlanMode("1. add the route\n2. test it");
    const running = hook(configDir, input);
    const request = await pendingRequestOf(input.session_id, "plan_approval");
    expect(request.payload).toMatchObject({ plan: "1. add the route\n2. test it" });
    await handshake.lead.decide(request.id, { type: "plan_approval_response", approve: true });
    const run = await running;
    expect(JSON.parse(run.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "allow", updatedInput: input.tool_input },
      },
    });
  });

  it("approves an edited plan by returning it in place of the model's", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = exitPlanMode("1. drop the table");
    const running = hook(configDir, input);
    const request = await pendingRequestOf(input.session_id, "plan_approval");
    await handshake.lead.decide(request.id, {
      type: "plan_approval_response",
      approve: true,
      editedPlan: "1. add a column; keep the table",
    });
    const run = await running;
    expect(JSON.parse(run.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: {
          behavior: "allow",
          updatedInput: { ...input.tool_input, plan: "1. add a column; keep the table" },
        },
      },
    });
  });

  it("denies with the Lead's feedback as the message", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const input = exitPlanMode("1. drop the table");
    const running = hook(configDir, input);
    const request = await pendingRequestOf(input.session_id, "plan_approval");
    await handshake.lead.decide(request.id, {
      type: "plan_approval_response",
      approve: false,
      feedback: "keep the table; add a column",
    });
    const output = JSON.parse((await running).stdout) as {
      hookSpecificOutput: { decision: { behavior: string; message: string } };
    };
    expect(output.hookSpecificOutput.decision.behavior).toBe("deny");
    expect(output.hookSpecificOutput.decision.message).toContain("keep the table; add a column");
  });
});

describe("handshake claude-code hook: session status", () => {
  it("reports idle on Stop and ends the agent on SessionEnd, never blocking", async () => {
    const configDir = await configFor(handshake.url, handshake.connect.token);
    const start = hookInput("SessionStart", { source: "startup", model: "claude-opus-4" });
    const started = await hook(configDir, start);
    expect(started.code, started.stderr).toBe(0);
    const where = { connector: { path: ["sessionId"], equals: start.session_id } };
    const agent = await getDb().agent.findFirstOrThrow({ where });
    expect(agent.status).toBe("idle");
    expect((agent.connector as { model: string }).model).toBe("claude-opus-4");

    const ended = await hook(configDir, {
      ...start,
      hook_event_name: "SessionEnd",
      reason: "exit",
    });
    expect(ended.code).toBe(0);
    expect(ended.stdout).toBe("");
    expect((await getDb().agent.findFirstOrThrow({ where })).status).not.toBe("idle");

    const down = await configFor(DOWN_URL, handshake.connect.token);
    const stop = await hook(down, { ...start, hook_event_name: "Stop" });
    expect(stop.code).toBe(0);
  });
});

/** `claude-code check` against a connection stored as `install` stores it. */
async function check(connection: { url: string; token: string }, extra: string[] = []) {
  const configDir = await newConfigDir();
  const previous = process.env.HANDSHAKE_CONFIG_DIR;
  process.env.HANDSHAKE_CONFIG_DIR = configDir;
  try {
    await saveConnection(connection);
  } finally {
    process.env.HANDSHAKE_CONFIG_DIR = previous;
  }
  return runCli(["claude-code", "check", ...extra], { env: { HANDSHAKE_CONFIG_DIR: configDir } });
}

describe("handshake claude-code check", () => {
  it("passes a connect token", async () => {
    // It read the token's scope where the error body does not keep it, and refused every one.
    const run = await check({ url: handshake.url, token: handshake.connect.token });
    expect(run.stdout).toBe(`server: ${handshake.url} answers\ntoken: a valid \`connect\` token\n`);
    expect(run.code).toBe(0);
  });

  it("fails a project whose settings switch Claude Code's hooks off, naming the file", async () => {
    const dir = await makeTempDir("handshake-project-");
    await mkdir(path.join(dir, ".claude"));
    const local = path.join(dir, ".claude", "settings.local.json");
    await writeFile(local, '{"disableAllHooks": true}');
    const run = await check({ url: handshake.url, token: handshake.connect.token }, ["--dir", dir]);
    expect(run.stdout).toContain("token: a valid `connect` token");
    expect(run.stdout).toContain(`hooks: ${local} sets disableAllHooks`);
    expect(run.code).toBe(1);
  });

  it("names a token of another scope, a refused token and a server that is not there", async () => {
    const admin = await check({ url: handshake.url, token: (await createToken("admin")).token });
    expect(admin.stdout).toContain("token: accepted, but it is not a `connect` token");
    expect(admin.code).toBe(1);
    const read = await check({ url: handshake.url, token: (await createToken("read")).token });
    expect(read.stdout).toContain("token: accepted, but it is not a `connect` token");
    expect(read.code).toBe(1);
    const bogus = await check({ url: handshake.url, token: "hs_lead_not_a_real_token_0000000000" });
    expect(bogus.stdout).toContain("token: refused (UNAUTHENTICATED");
    expect(bogus.code).toBe(1);
    const down = await check({ url: DOWN_URL, token: handshake.connect.token });
    expect(down.stdout).toMatch(/unreachable/);
    expect(down.code).toBe(1);
  });
});
