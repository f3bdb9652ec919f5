import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createToken } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

/**
 * Red team: a teammate's directory widened its session's. The session runs in `repo/app`, a
 * directory of a git repository. The model starts a subagent with `isolation: "worktree"` (the
 * `Agent` tool runs at once), and Claude Code makes its worktree at the repository's root,
 * `repo/.claude/worktrees/agent-…`. The teammate registered with that directory as its own, so its
 * `cat other/secret.txt` (the committed copy of `repo/other/secret.txt`) ran at once: found with
 * the real CLI, the hook and the server. A teammate, or a session started from another (its
 * parent session), is judged from its parent's directory unless its own lies inside it.
 */
const SESSION_CWD = "/home/ada/repo/app";
const WORKTREE = "/home/ada/repo/.claude/worktrees/agent-ab865";

/** Registers sessions and teammates with one `connect` token, as its hook does. */
async function connectorOfNewToken() {
  const { headers } = await createToken("connect");
  return async (body: Record<string, unknown>) => {
    const response = await api.connectSession(headers, body);
    expect([200, 201]).toContain(response.status);
    return {
      headers: { authorization: `Bearer ${String(response.json.token)}` },
      name: (response.json.agent as { name: string }).name,
      cwd: (response.json.agent as { connector: { cwd: string } }).connector.cwd,
    };
  };
}

async function readsInWorktree(headers: Record<string, string>) {
  return api.toolCall(headers, {
    tool: "Bash",
    args: { command: "cat other/secret.txt" },
    cwd: WORKTREE,
  });
}

describe("a teammate in a directory beside its session's (red team)", () => {
  it("a worktree subagent at the repository's root reads nothing at once", async () => {
    const connect = await connectorOfNewToken();
    const sessionId = randomUUID();
    await connect({ sessionId, cwd: SESSION_CWD });
    const teammate = await connect({ sessionId, agentId: "ab865", cwd: WORKTREE });
    expect(teammate.cwd).toBe(SESSION_CWD);
    const call = await readsInWorktree(teammate.headers);
    expect(call.json.allowed).toBe(false);
    expect(call.json.code).toBe("TOOL_APPROVAL_REQUIRED");
  });

  it("nor does a session started from it", async () => {
    const connect = await connectorOfNewToken();
    const parentSessionId = randomUUID();
    await connect({ sessionId: parentSessionId, cwd: SESSION_CWD });
    const child = await connect({ sessionId: randomUUID(), parentSessionId, cwd: WORKTREE });
    expect(child.cwd).toBe(SESSION_CWD);
    expect((await readsInWorktree(child.headers)).json.allowed).toBe(false);
  });

  it("a teammate registered wider before the rule is kept within its session's on its next connect", async () => {
    const connect = await connectorOfNewToken();
    const sessionId = randomUUID();
    await connect({ sessionId, cwd: SESSION_CWD });
    const teammate = { sessionId, agentId: "legacy1", cwd: WORKTREE };
    const { name } = await connect(teammate);
    const row = await getDb().agent.findUniqueOrThrow({ where: { name } });
    await getDb().agent.update({
      where: { id: row.id },
      data: { connector: { ...(row.connector as Record<string, unknown>), cwd: WORKTREE } },
    });
    const again = await connect(teammate);
    expect(again.cwd).toBe(SESSION_CWD);
    expect((await readsInWorktree(again.headers)).json.allowed).toBe(false);
  });

  it("a teammate in a directory inside its session's keeps its own", async () => {
    const connect = await connectorOfNewToken();
    const sessionId = randomUUID();
    await connect({ sessionId, cwd: SESSION_CWD });
    const inside = `${SESSION_CWD}/.claude/worktrees/agent-c1`;
    const teammate = await connect({ sessionId, agentId: "c1", cwd: inside });
    expect(teammate.cwd).toBe(inside);
    const call = await api.toolCall(teammate.headers, {
      tool: "Bash",
      args: { command: "cat README.md" },
      cwd: inside,
    });
    expect(call.json.allowed).toBe(true);
  });
});
