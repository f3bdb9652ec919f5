import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { deliverMessage } from "../../lib/messages/deliver";
import { api, lead, registerAgent } from "../api/fixtures";

afterAll(() => getDb().$disconnect());

type Read = { messages: { id: number; content: string }[]; cursor: number };

// Agents read their inbox by id cursor ("after"). Ids are taken at insert and become visible at
// commit, so if two messages to one agent could commit out of id order, a read between the two
// commits would move the cursor past the slower one and it would never be read. The soak found
// this (3 plain messages in a 120 s run); deliverMessage now holds the recipient's row lock from
// the insert to the commit, so one agent's messages commit in id order.
describe("inbox cursor and commit order", () => {
  it("a message still being committed is never skipped by a cursor read", async () => {
    const agent = await registerAgent();
    const { id: agentId } = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    let commit!: () => void;
    const isCommitAllowed = new Promise<void>((resolve) => (commit = resolve));
    let slowId = 0;
    const slow = getDb().$transaction(
      async (tx) => {
        slowId = await deliverMessage(tx, {
          from: "lead",
          to: agent.name,
          agentId,
          incarnation: 1,
          type: "message",
          content: "slow",
        });
        await isCommitAllowed;
      },
      { timeout: 15_000 },
    );
    while (!slowId) await new Promise((resolve) => setTimeout(resolve, 10));

    // Another message to the same agent while the first is still uncommitted.
    const fast = api.sendMessage((await lead()).headers, { to: agent.name, content: "fast" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const during = (await api.inbox(agent.headers, "?after=0")).json as unknown as Read;
    commit();
    await slow;
    expect((await fast).status).toBe(201);
    const after = (await api.inbox(agent.headers, `?after=${during.cursor}`))
      .json as unknown as Read;

    // Whatever the first read saw, the two reads together hold both messages, once, in order.
    const seen = [...during.messages, ...after.messages].map((message) => message.content);
    expect(seen).toEqual(["slow", "fast"]);
  });
});
