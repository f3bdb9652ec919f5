import { afterAll, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { ackInbox } from "../../lib/messages/mutations";
import { api, lead, registerAgent, uniqueName } from "./fixtures";

// A broadcast writes to, and locks, every active agent: on a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_messages");
});

afterAll(() => getDb().$disconnect());

type Message = { id: number; from: string; to: string; type: string; content: string };

describe("messages and inbox", () => {
  it("messages survive a read without ack; ack moves the cursor; nothing is deleted", async () => {
    const agent = await registerAgent();
    const { headers } = await lead();
    for (const content of ["one", "two", "three"]) {
      expect((await api.sendMessage(headers, { to: agent.name, content })).status).toBe(201);
    }
    const firstRead = (await api.inbox(agent.headers)).json;
    expect((firstRead.messages as Message[]).map((message) => message.content)).toEqual([
      "one",
      "two",
      "three",
    ]);
    // A crash before ack: the next read sees the same messages.
    const reread = (await api.inbox(agent.headers)).json;
    expect(reread.messages).toEqual(firstRead.messages);

    const second = (firstRead.messages as Message[])[1];
    if (!second) throw new Error("expected messages");
    expect((await api.ack(agent.headers, second.id)).json).toEqual({ ackedUpTo: second.id });
    expect(
      ((await api.inbox(agent.headers)).json.messages as Message[]).map(
        (message) => message.content,
      ),
    ).toEqual(["three"]);
    // An explicit cursor still reads history, and acks never move backwards.
    expect((await api.inbox(agent.headers, "?after=0")).json.messages as Message[]).toHaveLength(3);
    expect((await api.ack(agent.headers, 0)).json).toEqual({ ackedUpTo: second.id });
  });

  it("an ack of an incarnation that has ended moves nothing its successor reads", async () => {
    // Round eleven: the ack took no incarnation, so one let through just before a respawn moved
    // the mark past the messages carried over to the new incarnation, which never read them.
    const agent = await registerAgent();
    const ended = await getDb().agent.findUniqueOrThrow({ where: { name: agent.name } });
    const { headers } = await lead();
    const sent = await api.sendMessage(headers, { to: agent.name, content: "for whoever is next" });
    // As the sweeper leaves a worker that went silent, which its supervisor then starts again.
    await getDb().agent.update({ where: { id: ended.id }, data: { status: "offline" } });
    const respawned = await api.respawn(headers, agent.name);
    expect(respawned.status).toBe(201);

    const staleAck = ackInbox(
      getDb(),
      { agentId: ended.id, incarnation: ended.incarnation },
      Number(sent.json.id),
    );
    await expect(staleAck).rejects.toMatchObject({ code: "STALE_INCARNATION" });
    const successor = { authorization: `Bearer ${String(respawned.json.token)}` };
    const read = (await api.inbox(successor)).json.messages as Message[];
    expect(read.map((message) => message.content)).toEqual(["for whoever is next"]);
  });

  it("an ack past the newest message stops at the newest message", async () => {
    const agent = await registerAgent();
    const sent = await api.sendMessage((await lead()).headers, {
      to: agent.name,
      content: "only one",
    });
    const ack = await api.ack(agent.headers, 9_000_000_000);
    expect(ack.json).toEqual({ ackedUpTo: sent.json.id });
    await api.sendMessage((await lead()).headers, { to: agent.name, content: "later" });
    expect(
      ((await api.inbox(agent.headers)).json.messages as Message[]).map(
        (message) => message.content,
      ),
    ).toEqual(["later"]);
  });

  it("an agent reads only its own inbox and can message the Lead and peers", async () => {
    const alice = await registerAgent();
    const bob = await registerAgent();
    const toBob = await api.sendMessage(alice.headers, { to: bob.name, content: "hi bob" });
    expect(toBob.json).toMatchObject({ from: alice.name, to: bob.name, type: "message" });
    expect((await api.inbox(alice.headers)).json.messages as Message[]).toHaveLength(0);
    expect(
      ((await api.inbox(bob.headers)).json.messages as Message[]).map((message) => message.content),
    ).toEqual(["hi bob"]);
    const toLead = await api.sendMessage(alice.headers, { to: "lead", content: "status: fine" });
    expect(toLead.json).toMatchObject({ from: alice.name, to: "lead" });
  });

  it("broadcast reaches every active agent, from the Lead only", async () => {
    const alice = await registerAgent();
    const bob = await registerAgent();
    const { headers } = await lead();
    const sent = await api.sendMessage(headers, { to: "*", content: "standup in 5" });
    expect(sent.status).toBe(201);
    for (const agent of [alice, bob]) {
      expect(((await api.inbox(agent.headers)).json.messages as Message[]).at(-1)).toMatchObject({
        type: "broadcast",
        content: "standup in 5",
        from: "lead",
      });
    }
    const fromAgent = await api.sendMessage(alice.headers, { to: "*", content: "hey all" });
    expect(fromAgent.status).toBe(403);
  });

  it("unknown, inactive and unsafe recipients are refused before anything is stored", async () => {
    const { headers } = await lead();
    // Other test files send messages meanwhile: only what these calls carry is looked for.
    const marker = uniqueName("refused");
    const emptyToBob = { sender: "lead", recipient: "bob", content: "" };
    const emptyToBobBefore = await getDb().message.count({ where: emptyToBob });
    const cases: [unknown, number, string][] = [
      [{ to: "nobody-here", content: marker }, 404, "AGENT_NOT_FOUND"],
      [{ to: "../../etc", content: marker }, 400, "INVALID_INPUT"],
      [{ to: "bob\u0000", content: marker }, 400, "INVALID_INPUT"],
      [{ to: "bob", content: "" }, 400, "INVALID_INPUT"],
      [{ to: "bob", content: marker.padEnd(16_001, "x") }, 400, "INVALID_INPUT"],
      [{ to: "bob", content: marker, type: "shutdown" }, 400, "INVALID_INPUT"],
    ];
    for (const [body, status, code] of cases) {
      const response = await api.sendMessage(headers, body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.json.error?.code).toBe(code);
    }
    expect(await getDb().message.count({ where: { content: { startsWith: marker } } })).toBe(0);
    expect(await getDb().message.count({ where: emptyToBob })).toBe(emptyToBobBefore);
  });

  it("bad cursors and waits are refused with typed errors", async () => {
    const agent = await registerAgent();
    for (const query of [
      "?after=-1",
      "?after=abc",
      "?wait=31",
      "?wait=-2",
      "?limit=0",
      "?bogus=1",
    ]) {
      const response = await api.inbox(agent.headers, query);
      expect(response.status, query).toBe(400);
      expect(response.json.error?.code).toBe("INVALID_INPUT");
    }
  });
});
