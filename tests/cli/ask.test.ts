import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { expireDueRequests } from "../../lib/requests/mutations";
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
/** The server's sweep, which applies a question's timeout policy; the test server runs none. */
let sweep: NodeJS.Timeout;
/**
 * The sweep under way, one at a time as the server's: on a loaded machine one outlasts the next
 * tick, and a disconnect in the middle of its transaction fails it.
 */
let sweeping: Promise<void> | undefined;

beforeAll(async () => {
  await ensureCliBundle();
  handshake = await startHandshake();
  sweep = setInterval(() => {
    sweeping ??= expireDueRequests(getDb())
      .then(
        () => undefined,
        (error: unknown) => console.error("[test sweep] failed; retrying next tick", error),
      )
      .finally(() => {
        sweeping = undefined;
      });
  }, 500);
}, 60_000);

afterAll(async () => {
  clearInterval(sweep);
  await sweeping;
  await handshake.stop();
  await getDb().$disconnect();
});

/** Each test its own agent: a newer question supersedes an older one of the same agent. */
async function newAgent(): Promise<{ token: string; name: string }> {
  const connect = new LeadClient(handshake.url, handshake.connect.token);
  const session = await connect.connectSession({ sessionId: randomUUID(), cwd: tmpdir() });
  return { token: session.token, name: session.agent.name };
}

function ask(agent: { token: string }, args: string[]) {
  return runCli(["ask", "--url", handshake.url, ...args], {
    env: { HANDSHAKE_AGENT_TOKEN: agent.token },
  });
}

async function pendingQuestionOf(name: string): Promise<string> {
  for (;;) {
    const request = await getDb().request.findFirst({
      where: { type: "question", status: "pending", agent: { name } },
    });
    if (request) return request.id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const WHERE = ["where to deploy?", "--option", "staging", "--option", "production=Production"];

describe("handshake ask", () => {
  it("prints the option the Lead picks and exits 0", async () => {
    const agent = await newAgent();
    const running = ask(agent, WHERE);
    const id = await pendingQuestionOf(agent.name);
    const stored = await getDb().request.findUniqueOrThrow({ where: { id } });
    expect(stored.payload).toMatchObject({
      question: "where to deploy?",
      options: [
        { id: "staging", label: "staging" },
        { id: "production", label: "Production" },
      ],
    });
    await handshake.lead.decide(id, {
      type: "question_response",
      approve: true,
      answer: { option: "production" },
    });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("production\n");
  });

  it("prints the Lead's text on one line, after the option when both are given", async () => {
    const agent = await newAgent();
    const running = ask(agent, [...WHERE, "--allow-text"]);
    const id = await pendingQuestionOf(agent.name);
    await handshake.lead.decide(id, {
      type: "question_response",
      approve: true,
      answer: { option: "staging", text: "then production\ntomorrow" },
    });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("staging: then production tomorrow\n");
  });

  it("prints the default and exits 0 when the deadline passes, saying so on stderr", async () => {
    const run = await ask(await newAgent(), [...WHERE, "--default", "staging", "--timeout", "5"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("staging\n");
    expect(run.stderr).toMatch(/default answered/);
  });

  it("exits 2 when the deadline passes without a default, or the Lead declines", async () => {
    const timedOut = await ask(await newAgent(), [...WHERE, "--timeout", "5"]);
    expect(timedOut.code).toBe(2);
    expect(timedOut.stdout).toBe("");
    expect(timedOut.stderr).toMatch(/no answer from the Lead before the deadline/);

    const agent = await newAgent();
    const running = ask(agent, WHERE);
    const id = await pendingQuestionOf(agent.name);
    await handshake.lead.decide(id, {
      type: "question_response",
      approve: false,
      feedback: "ask the release manager",
    });
    const declined = await running;
    expect(declined.code).toBe(2);
    expect(declined.stderr).toMatch(/declined to answer: ask the release manager/);
  });

  it("exits 2 when a newer question of the same agent withdraws it", async () => {
    const agent = await newAgent();
    const first = ask(agent, WHERE);
    const firstId = await pendingQuestionOf(agent.name);
    const second = ask(agent, ["which region?", "--allow-text"]);
    const withdrawn = await first;
    expect(withdrawn.code).toBe(2);
    expect(withdrawn.stderr).toMatch(/withdrawn before an answer \(superseded/);
    const secondId = await pendingQuestionOf(agent.name);
    expect(secondId).not.toBe(firstId);
    await handshake.lead.decide(secondId, {
      type: "question_response",
      approve: true,
      answer: { text: "eu-west-1" },
    });
    expect((await second).stdout).toBe("eu-west-1\n");
  });

  it("asks as a script session of a connect token, named by --agent", async () => {
    const name = `asker-${randomUUID().slice(0, 6)}`;
    const running = runCli(["ask", "--url", handshake.url, "--agent", name, ...WHERE], {
      env: {
        HANDSHAKE_TOKEN: handshake.connect.token,
        HANDSHAKE_CONFIG_DIR: await makeTempDir("handshake-config-"),
      },
    });
    const id = await pendingQuestionOf((await scriptSessionAgent(name)).name);
    await handshake.lead.decide(id, {
      type: "question_response",
      approve: true,
      answer: { option: "staging" },
    });
    const run = await running;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("staging\n");
  });

  it("exits 2 when the server is unreachable or the token is refused", async () => {
    const down = await runCli(["ask", "--url", DOWN_URL, ...WHERE], {
      env: { HANDSHAKE_AGENT_TOKEN: (await newAgent()).token },
    });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/unreachable/);
    const refused = await ask({ token: "hs_not_a_real_agent_token_000000000000" }, WHERE);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/refused/);
  });

  it("refuses a default that is not an option, or a bad option id, before asking anything", async () => {
    const agent = await newAgent();
    const badDefault = await ask(agent, [...WHERE, "--default", "moon"]);
    expect(badDefault.code).toBe(1);
    expect(badDefault.stderr).toMatch(/--default: the default must be one of the option ids/);
    const badId = await ask(agent, ["where?", "--option", "two words=Two words"]);
    expect(badId.code).toBe(1);
    expect(badId.stderr).toMatch(/--option: option ids are/);
    // Even with the server down, misuse is reported as misuse, not as unreachable.
    const offline = await runCli(["ask", "--url", DOWN_URL, ...WHERE, "--default", "moon"], {
      env: { HANDSHAKE_AGENT_TOKEN: agent.token },
    });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toMatch(/--default/);
    // No server named anywhere, or one that is no HTTP URL: misuse too (it exited 2, "unreachable").
    const nowhere = await runCli(["ask", ...WHERE], {
      env: { HANDSHAKE_AGENT_TOKEN: agent.token, HANDSHAKE_CONFIG_DIR: await newConfigDir() },
    });
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain("no server URL: give --url, set HANDSHAKE_URL");
    const ftp = await runCli(["ask", "--url", "ftp://x", ...WHERE], {
      env: { HANDSHAKE_AGENT_TOKEN: agent.token },
    });
    expect(ftp.code).toBe(1);
    expect(ftp.stderr).toContain("ftp://x: the URL must be http:// or https://");
    expect(
      await getDb().request.count({ where: { type: "question", agent: { name: agent.name } } }),
    ).toBe(0);
  });
});
