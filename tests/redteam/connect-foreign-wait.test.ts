import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createToken } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team (held): a session's hook waits on its own card with `GET /requests/{id}?wait=N`. Another
 * session of the same connect token, its own teammate, and the connect token itself cannot read or
 * hold that card.
 */
async function connect(connectHeaders: Record<string, string>, body: Record<string, unknown>) {
  const response = await api.connectSession(connectHeaders, { cwd: "/home/ada/app", ...body });
  expect([200, 201]).toContain(response.status);
  return { authorization: `Bearer ${String(response.json.token)}` };
}

describe("waiting on another session's card (red team)", () => {
  it("is refused for a sibling session, a teammate and the connect token", async () => {
    const connectToken = await createToken("connect");
    const sessionId = randomUUID();
    const owner = await connect(connectToken.headers, { sessionId });
    const sibling = await connect(connectToken.headers, { sessionId: randomUUID() });
    const teammate = await connect(connectToken.headers, { sessionId, agentId: "a1b2c3" });
    const card = await api.toolCall(owner, {
      tool: "Bash",
      args: { command: "git push" },
      cwd: "/home/ada/app",
    });
    const id = String(card.json.requestId);
    expect(card.json.code).toBe("TOOL_APPROVAL_REQUIRED");

    for (const headers of [sibling, teammate]) {
      const answer = await api.getRequest(headers, id, "?wait=5");
      expect(answer.status).toBe(403);
      expect(answer.json.request).toBeUndefined();
    }
    expect((await api.getRequest(connectToken.headers, id, "?wait=5")).status).toBe(403);
    expect((await api.getRequest(owner, id)).json).toMatchObject({ id, status: "pending" });
  });
});
