import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { LeadClient } from "../../lib/sdk/lead-client";
import {
  DOWN_URL,
  ensureCliBundle,
  newConfigDir,
  runCli,
  scriptSessionAgent,
  startHandshake,
  type Handshake,
} from "../support/handshake-cli";
import { makeTempDir } from "../support/temp-dirs";

let handshake: Handshake;
/** A shell agent's own token: a connected session's agent, as a script would be given. */
let agentToken: string;
let agentName: string;

beforeAll(async () => {
  await ensureCliBundle();
  handshake = await startHandshake();
  const connect = new LeadClient(handshake.url, handshake.connect.token);
  const session = await connect.connectSession({ sessionId: randomUUID(), cwd: tmpdir() });
  agentToken = session.token;
  agentName = session.agent.name;
}, 60_000);

afterAll(async () => {
  await handshake.stop();
  await getDb().$disconnect();
});

function waitFor(args: string[], env: Record<string, string> = {}) {
  return runCli(["wait-for-approval", "--url", handshake.url, ...args], {
    env: { HANDSHAKE_AGENT_TOKEN: agentToken, ...env },
  });
}

async function pendingOf(name: string, type: string): Promise<string> {
  for (;;) {
    const request = await getDb().request.findFirst({
      where: { type, status: "pending", agent: { name } },
      orderBy: { createdAt: "desc" },
    });
    if (request) return request.id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("handshake wait-for-approval", () => {
  it("exits 0 when the Lead approves the call", async () => {
    const running = waitFor(["--tool", "Bash", "--args", '{"command":"rm -rf build"}']);
    const id = await pendingOf(agentName, "tool_approval");
    await handshake.lead.decide(id, { type: "tool_approval_response", approve: true });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
  });

  it("exits 1 when the Lead approves an edited call: the script would run its own, so it is told what was approved", async () => {
    const running = waitFor(["--tool", "Bash", "--args", '{"command":"rm -rf dist"}']);
    const id = await pendingOf(agentName, "tool_approval");
    await handshake.lead.decide(id, {
      type: "tool_approval_response",
      approve: true,
      editedArgs: { command: "rm -rf dist/cache" },
    });
    const run = await running;
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain("TOOL_APPROVAL_DENIED");
    expect(run.stdout).toContain('{"command":"rm -rf dist/cache"}');
  });

  it("prints the Lead's edited plan with the approval", async () => {
    const plan = path.join(await makeTempDir("plan-"), "plan.md");
    await writeFile(plan, "1. migrate\n2. deploy");
    const connect = new LeadClient(handshake.url, handshake.connect.token);
    const session = await connect.connectSession({ sessionId: randomUUID(), cwd: tmpdir() });
    const running = waitFor(["--plan", plan], { HANDSHAKE_AGENT_TOKEN: session.token });
    const id = await pendingOf(session.agent.name, "plan_approval");
    await handshake.lead.decide(id, {
      type: "plan_approval_response",
      approve: true,
      editedPlan: "1. migrate\n2. deploy on Monday",
    });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("follow this plan:\n1. migrate\n2. deploy on Monday");
  });

  it("exits 1 with the feedback printed when the Lead rejects the plan", async () => {
    const plan = path.join(await makeTempDir("plan-"), "plan.md");
    await writeFile(plan, "1. migrate\n2. deploy");
    // Its own agent: a rejected plan closes the agent's gate for the tests after it.
    const connect = new LeadClient(handshake.url, handshake.connect.token);
    const session = await connect.connectSession({ sessionId: randomUUID(), cwd: tmpdir() });
    const running = waitFor(["--plan", plan], { HANDSHAKE_AGENT_TOKEN: session.token });
    const id = await pendingOf(session.agent.name, "plan_approval");
    await handshake.lead.decide(id, {
      type: "plan_approval_response",
      approve: false,
      feedback: "deploy on Monday",
    });
    const run = await running;
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("deploy on Monday");
  });

  it("exits 2 when nobody decides before the timeout", async () => {
    const run = await waitFor(["--tool", "Bash", "--args", '{"command":"make"}', "--timeout", "5"]);
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/deadline passed/);
  });

  it("exits 2 when the server is unreachable or the token is refused", async () => {
    const down = await runCli(
      ["wait-for-approval", "--url", DOWN_URL, "--tool", "Bash", "--args", "{}"],
      { env: { HANDSHAKE_AGENT_TOKEN: agentToken } },
    );
    expect(down.code).toBe(2);
    expect(down.stdout).toMatch(/unreachable/);
    const refused = await waitFor(["--tool", "Bash", "--args", "{}"], {
      HANDSHAKE_AGENT_TOKEN: "hs_not_a_real_agent_token_000000000000",
    });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toMatch(/refused/);
  });

  it("acts as a script session of a connect token: its calls wait for the Lead", async () => {
    const name = `shell-${randomUUID().slice(0, 6)}`;
    const configDir = await makeTempDir("handshake-config-");
    const asNamed = () =>
      runCli(["wait-for-approval", "--url", handshake.url, "--agent", name, "--tool", "deploy"], {
        env: { HANDSHAKE_TOKEN: handshake.connect.token, HANDSHAKE_CONFIG_DIR: configDir },
      });
    for (let round = 0; round < 2; round += 1) {
      const running = asNamed();
      const agent = await scriptSessionAgent(name);
      await handshake.lead.decide(await pendingOf(agent.name, "tool_approval"), {
        type: "tool_approval_response",
        approve: true,
      });
      const run = await running;
      expect(run.code, run.stderr).toBe(0);
    }
    // The second run reused the cached agent token instead of starting a new incarnation.
    const agent = await scriptSessionAgent(name);
    const row = await getDb().agent.findUniqueOrThrow({ where: { id: agent.id } });
    expect(row.incarnation).toBe(1);
  });
});

/**
 * Red team: `handshake wait-for-approval --agent NAME` registered a plain agent (`POST /agents`),
 * which the server judges as a sandboxed worker: an unknown tool, `Bash` among them, "changes
 * nothing", and a `bash` command that writes nothing outside the (sandbox's) workspace runs at
 * once. The CLI printed "approved" and exited 0 for a command the script then runs unsandboxed on
 * the user's machine, and no Lead ever saw a card. Exit 0 must mean the Lead approved this call.
 */
describe("wait-for-approval --agent NAME (red team)", () => {
  it.each([
    ["Bash", { command: "rm -rf / --no-preserve-root" }],
    ["bash", { command: "terraform apply -auto-approve" }],
  ])("does not exit 0 for %s %j when nobody decided", async (tool, args) => {
    const name = `shell-${randomUUID().slice(0, 6)}`;
    const run = await runCli(
      [
        "wait-for-approval",
        "--url",
        handshake.url,
        "--agent",
        name,
        "--tool",
        tool,
        "--args",
        JSON.stringify(args),
        "--timeout",
        "5",
      ],
      {
        env: {
          HANDSHAKE_TOKEN: handshake.connect.token,
          HANDSHAKE_CONFIG_DIR: await newConfigDir(),
        },
      },
    );
    const agent = await scriptSessionAgent(name);
    const cards = await getDb().request.count({ where: { agentId: agent.id } });
    expect({ code: run.code, stdout: run.stdout.trim(), cards }).toMatchObject({
      code: 2,
      cards: 1,
    });
  });
});
