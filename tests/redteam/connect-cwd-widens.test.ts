import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createToken } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team: the connector gate took each call's `cwd` as the workspace. The session started in
 * /home/ada/app; once its shell stood in /home/ada (one approved `cd ..`, or a hook that says so),
 * every read in the home directory ran at once: `cat .ssh/id_rsa`, Read ~/.aws/credentials.
 * A call's directory may narrow the session's, never widen it.
 */
async function session() {
  const connect = await createToken("connect");
  const response = await api.connectSession(connect.headers, {
    sessionId: randomUUID(),
    cwd: "/home/ada/app",
  });
  expect(response.status).toBe(201);
  return { authorization: `Bearer ${String(response.json.token)}` };
}

describe("a call's cwd outside the session's directory (red team)", () => {
  it.each<[string, Record<string, unknown>]>([
    ["Bash", { command: "cat .ssh/id_rsa" }],
    ["Read", { file_path: "/home/ada/.aws/credentials" }],
    ["Grep", { pattern: "KEY" }],
  ])("%s %j in /home/ada is not read-only", async (tool, args) => {
    const headers = await session();
    const call = await api.toolCall(headers, { tool, args, cwd: "/home/ada" });
    expect(call.status).toBe(200);
    expect(call.json.allowed).toBe(false);
    expect(call.json.code).toBe("TOOL_APPROVAL_REQUIRED");
  });

  it("a directory below the session's still bounds reads", async () => {
    const headers = await session();
    const inside = await api.toolCall(headers, {
      tool: "Bash",
      args: { command: "cat README.md" },
      cwd: "/home/ada/app/docs",
    });
    expect(inside.json.allowed).toBe(true);
    const up = await api.toolCall(headers, {
      tool: "Bash",
      args: { command: "cat ../package.json" },
      cwd: "/home/ada/app/docs",
    });
    expect(up.json.allowed).toBe(false);
  });
});
