import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { getDb } from "../../lib/db";
import { api, createToken, lead, uniqueName } from "../api/fixtures";
import { callRoute } from "../route-client";

afterAll(() => getDb().$disconnect());

const push = (cwd: string) => ({
  tool: "Bash",
  cwd,
  args: { command: "git push --force origin main" },
});

/** The Lead's standing yes for the deploy workers it registered with that role. */
async function deployersMayPush(): Promise<string> {
  const { headers } = await lead();
  const role = uniqueName("deployer");
  expect((await api.registerAgent(headers, { name: uniqueName("deploy-bot"), role })).status).toBe(
    201,
  );
  const rule = await callRoute(rulesRoute.POST, {
    path: "/api/v1/rules",
    headers,
    body: { pattern: "Bash(git push*)", effect: "allow", scope: { kind: "role", role } },
  });
  expect(rule.status).toBe(201);
  return role;
}

/**
 * Red team: a role is whatever the registering credential says, and a `connect` token (which the
 * model may hold) named its own agents after the Lead's deployers: their `git push --force` was
 * allowed by the deployers' rule, with no card.
 */
describe("a role a connect token names (red team)", () => {
  it("a teammate whose agent type is the role falls under no rule of that role", async () => {
    const role = await deployersMayPush();
    const connect = await createToken("connect");
    const cwd = `/home/ada/${uniqueName("proj")}`;
    const teammate = await api.connectSession(connect.headers, {
      sessionId: randomUUID(),
      cwd,
      agentId: randomUUID(),
      agentType: role,
    });
    expect((teammate.json.agent as { role: string }).role).toBe(role);

    const verdict = await api.toolCall(
      { authorization: `Bearer ${String(teammate.json.token)}` },
      push(cwd),
    );

    expect(verdict.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
  });

  it("a session that tries to register itself again under the role falls under no rule of it", async () => {
    const role = await deployersMayPush();
    const connect = await createToken("connect");
    const cwd = `/home/ada/${uniqueName("proj")}`;
    const sessionId = randomUUID();
    const first = await api.connectSession(connect.headers, { sessionId, cwd });
    const name = String((first.json.agent as { name: string }).name);
    await api.heartbeat(
      { authorization: `Bearer ${String(first.json.token)}` },
      { status: "ended" },
    );
    // Since round eleven the token cannot register a session's name again at all: a session
    // comes back by connecting, as it then does.
    expect((await api.registerAgent(connect.headers, { name, role })).status).toBe(403);
    const again = await api.connectSession(connect.headers, { sessionId, cwd });

    const verdict = await api.toolCall(
      { authorization: `Bearer ${String(again.json.token)}` },
      push(cwd),
    );

    expect(verdict.json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
  });
});
