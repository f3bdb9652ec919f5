import { afterAll, describe, expect, it } from "vitest";
import type { HumanActor } from "../../lib/auth/actor";
import { createDb, poolOf } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { sendMessage } from "../../lib/messages/mutations";
import { readInbox } from "../../lib/messages/data";
import { EventHub } from "../../lib/realtime/event-hub";
import { recordToolCall } from "../../lib/tool-calls/mutations";
import { registerAgentActor } from "../support/agent-actor";

const LEAD: HumanActor = {
  kind: "human",
  userId: "hot-statements-lead",
  email: "lead@example.com",
  name: "Lead",
  role: "lead",
  via: "token",
  tokenId: "00000000-0000-4000-8000-000000000000",
  tokenName: "hot statements",
  scope: "admin",
};

// A client as the server makes it, whose pool the hot statements go to (lib/db.ts, queryHot).
const db = createDb(requireDatabaseUrl());
afterAll(() => db.$disconnect());

async function preparedOnEveryConnection(pool: NonNullable<ReturnType<typeof poolOf>>) {
  const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
  try {
    return await Promise.all(
      clients.map(async (client) =>
        (await client.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map(
          (row) => row.name,
        ),
      ),
    );
  } finally {
    for (const client of clients) client.release();
  }
}

describe("hot statements", () => {
  it("a gate verdict's statement is prepared on the connection that ran it", async () => {
    const caller = await registerAgentActor(db, "hot");
    const call = { tool: "read_file", args: { path: "README.md" } };
    // The first verdict takes the full path and remembers the row; the next ones are one statement.
    await recordToolCall(db, caller, call);
    for (let turn = 0; turn < 3; turn++) {
      expect(await recordToolCall(db, caller, call)).toEqual({ allowed: true });
    }
    const pool = poolOf(db);
    expect(pool).toBeDefined();
    const names = await preparedOnEveryConnection(pool as NonNullable<typeof pool>);
    expect(names.some((list) => list.includes("common-verdicts"))).toBe(true);
    expect(await db.toolCall.count({ where: { agentId: caller.agentId, isAllowed: true } })).toBe(
      4,
    );
  });

  it("an inbox read is prepared, and reads what the client would", async () => {
    const agent = await registerAgentActor(db, "hot");
    const hub = new EventHub();
    const empty = await readInbox(db, hub, agent, { after: 0, wait: 0, limit: 10 });
    expect(empty).toEqual({ messages: [], cursor: 0 });
    await sendMessage(db, LEAD, { to: agent.name, content: "hello" });
    const inbox = await readInbox(db, hub, agent, { after: 0, wait: 0, limit: 10 });
    const stored = await db.message.findFirstOrThrow({ where: { recipient: agent.name } });
    expect(inbox).toEqual({
      messages: [
        {
          id: Number(stored.id),
          from: "lead",
          to: agent.name,
          type: stored.type,
          content: "hello",
          metadata: stored.metadata,
          incarnation: agent.incarnation,
          cancelledAt: null,
          createdAt: stored.createdAt.toISOString(),
        },
      ],
      cursor: Number(stored.id),
    });
    const pool = poolOf(db);
    const names = await preparedOnEveryConnection(pool as NonNullable<typeof pool>);
    expect(names.some((list) => list.includes("inbox-read"))).toBe(true);
  });
});
