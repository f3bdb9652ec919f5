import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import {
  ensureCliBundle,
  newConfigDir,
  runCli,
  scriptSessionAgent,
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
