import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { user as userRoute } from "../../lib/api/v1/users";
import { getDb } from "../../lib/db";
import { api, createToken, lead } from "../api/fixtures";
import { callRoute, signedInHuman } from "../route-client";

afterAll(() => getDb().$disconnect());

/**
 * Red team: revoking a `connect` token ends the agents it registered (decision 017), but disabling
 * its owner, or making them a viewer, did not. The token itself is refused from then on, yet the
 * agent tokens it handed out kept working: the sessions of someone who left went on raising cards
 * in the Lead's inbox and messaging the team.
 */
async function connectedSessionOf(owner: { headers: Record<string, string> }) {
  const connect = await createToken("connect", owner);
  const response = await api.connectSession(connect.headers, {
    sessionId: randomUUID(),
    cwd: "/home/eve/app",
  });
  expect(response.status).toBe(201);
  const headers = { authorization: `Bearer ${String(response.json.token)}` };
  const name = String((response.json.agent as { name: string }).name);
  // A card pending for the Lead, which must not outlive the owner's access.
  const call = await api.toolCall(headers, {
    tool: "Bash",
    args: { command: "rm -rf build" },
    cwd: "/home/eve/app",
  });
  expect(call.json.code).toBe("TOOL_APPROVAL_REQUIRED");
  return { connect, headers, name };
}

async function changeUser(email: string, body: Record<string, unknown>) {
  const row = await getDb().user.findUniqueOrThrow({ where: { email } });
  const response = await callRoute(userRoute.PATCH, {
    method: "PATCH",
    path: `/api/v1/users/${row.id}`,
    params: { id: row.id },
    body,
    headers: (await lead()).headers,
  });
  expect(response.status).toBe(200);
}

describe("a connect token's owner loses access (red team)", () => {
  it.each([
    ["disabled", { disabled: true }],
    ["made a viewer", { role: "viewer" }],
  ])("when %s, the token's sessions end with it", async (_label, change) => {
    const owner = await signedInHuman("lead");
    const { connect, headers, name } = await connectedSessionOf(owner);

    await changeUser(owner.email, change);

    // The connect token itself was already refused.
    expect(
      (await api.connectSession(connect.headers, { sessionId: randomUUID(), cwd: "/x" })).status,
    ).toBeGreaterThanOrEqual(401);
    // Its session's agent token is refused too, and its card is no longer pending.
    const after = await api.toolCall(headers, {
      tool: "Read",
      args: { file_path: "/home/eve/app/a" },
      cwd: "/home/eve/app",
    });
    expect(after.status).toBe(401);
    const pending = await getDb().request.count({
      where: { agent: { name }, status: "pending" },
    });
    expect(pending).toBe(0);
  });
});
