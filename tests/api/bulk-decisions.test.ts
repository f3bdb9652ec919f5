import { afterAll, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { callApi, signedInHuman } from "../route-client";
import {
  api,
  createToken,
  lead,
  registerAgent,
  submitPlan,
  type TestAgent,
  uniqueName,
} from "./fixtures";

// A trigger on `requests` stands in for PostgreSQL undoing one decision; made on the shared
// database it would lock every file's writes to the table: on a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_bulk");
});

afterAll(() => getDb().$disconnect());

type Result = {
  id: string;
  ok: boolean;
  request?: { id: string; status: string; feedback: string | null; decidedBy: unknown };
  error?: { code: string; message: string };
};

/** Through the real router, as server.ts serves it. */
async function bulk(headers: Record<string, string>, body: unknown) {
  const response = await callApi({ path: "/api/v1/responses", body, headers });
  const json = (response.json ?? {}) as {
    results?: Result[];
    error?: { code: string; message: string };
  };
  return { status: response.status, json };
}

async function riskyCall(agent: TestAgent, command: string): Promise<string> {
  const { json } = await api.toolCall(agent.headers, { tool: "bash", args: { command } });
  expect(json).toMatchObject({ allowed: false, code: "TOOL_APPROVAL_REQUIRED" });
  return String(json.requestId);
}

async function askQuestion(agent: TestAgent): Promise<string> {
  const asked = await api.submitRequest(agent.headers, {
    type: "question",
    payload: { question: "Which region?", options: [{ id: "eu", label: "Europe" }] },
  });
  expect(asked.status).toBe(201);
  return String(asked.json.id);
}

async function statusOf(id: string): Promise<string> {
  return (await getDb().request.findUniqueOrThrow({ where: { id } })).status;
}

describe("bulk decisions: POST /responses", () => {
  it("decides each request on its own: its decision, its event, its provenance", async () => {
    const { headers } = await lead();
    const agent = await registerAgent();
    const ids = [
      await riskyCall(agent, "git push origin main"),
      await riskyCall(agent, "git push origin dev"),
      await riskyCall(agent, "rm -rf build"),
    ];
    const { status, json } = await bulk(headers, { ids, approve: true });
    expect(status).toBe(200);
    expect(json.results?.map((result) => [result.id, result.ok])).toEqual(
      ids.map((id) => [id, true]),
    );
    for (const id of ids) {
      expect(await statusOf(id)).toBe("approved");
      const events = await getDb().event.findMany({
        where: { kind: "request.decided", subject: `request:${id}` },
      });
      expect(events).toHaveLength(1);
      expect((events[0]?.data as { decidedBy: { kind: string } }).decidedBy.kind).toBe("human");
    }
    // Each approval is the one exact call it names, used by that call.
    expect(
      (await api.toolCall(agent.headers, { tool: "bash", args: { command: "rm -rf build" } })).json,
    ).toEqual({ allowed: true, requestId: ids[2] });
    expect((await api.getAgent(headers, agent.name)).json.status).toBe("working");
  });

  it("mixed types, a decided one, an unknown id and a question: each reported, the rest decided", async () => {
    const { headers } = await lead();
    const planner = await registerAgent({ requirePlan: true });
    const plan = String((await submitPlan(planner)).json.id);
    const caller = await registerAgent();
    const call = await riskyCall(caller, "git push --force");
    const decided = await riskyCall(caller, "git reset --hard");
    await api.respond(headers, decided, {
      type: "tool_approval_response",
      approve: true,
    });
    const question = await askQuestion(caller);
    const unknown = `req_${"0".repeat(32)}`;

    const { status, json } = await bulk(headers, {
      ids: [plan, decided, unknown, question, call],
      approve: false,
      feedback: "not today",
    });
    expect(status).toBe(200);
    const byId = new Map(json.results?.map((result) => [result.id, result]));
    expect(byId.get(plan)).toMatchObject({
      ok: true,
      request: { status: "rejected", feedback: "not today" },
    });
    expect(byId.get(call)).toMatchObject({ ok: true, request: { status: "rejected" } });
    expect(byId.get(decided)).toMatchObject({ ok: false, error: { code: "ALREADY_DECIDED" } });
    expect(byId.get(unknown)).toMatchObject({ ok: false, error: { code: "REQUEST_NOT_FOUND" } });
    expect(byId.get(question)).toMatchObject({
      ok: false,
      error: { code: "NOT_BULK_DECIDABLE", message: expect.stringContaining("answer") },
    });
    expect(await statusOf(question)).toBe("pending");
    expect(await statusOf(decided)).toBe("approved");
    expect((await api.getAgent(headers, planner.name)).json.gate).toBe("rejected");
  });

  it("a request past its deadline in the batch expires with its policy; the rest are decided", async () => {
    const { headers } = await lead();
    const agent = await registerAgent();
    const late = await riskyCall(agent, "git push late");
    const onTime = await riskyCall(agent, "git push on-time");
    await getDb().request.update({
      where: { id: late },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const { json } = await bulk(headers, { ids: [late, onTime], approve: true });
    expect(json.results).toMatchObject([
      { id: late, ok: false, error: { code: "REQUEST_EXPIRED" } },
      { id: onTime, ok: true, request: { status: "approved" } },
    ]);
    expect(await statusOf(late)).toBe("expired");
  });

  it.each([
    ["rolls back against another (a deadlock)", "40P01", "TRANSACTION_CONFLICT"],
    ["cancels", "57014", "STATEMENT_CANCELED"],
  ])(
    "a decision PostgreSQL %s is reported beside the others, which stand",
    async (_what, sqlState, code) => {
      // Review, round nine: the deadlock ended the batch with 503 "nothing changed", though the
      // decisions before it had committed.
      const { headers } = await lead();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(String((await submitPlan(await registerAgent({ requirePlan: true }))).json.id));
      }
      const victim = ids[1] as string;
      const db = getDb();
      const suffix = victim.replace(/\W/g, "_");
      await db.$executeRawUnsafe(`
      CREATE FUNCTION deadlock_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'undone by the test' USING ERRCODE = '${sqlState}'; END $$`);
      await db.$executeRawUnsafe(`
      CREATE TRIGGER deadlock_${suffix} BEFORE UPDATE ON requests FOR EACH ROW
      WHEN (OLD.id = '${victim}') EXECUTE FUNCTION deadlock_${suffix}()`);
      try {
        const answer = await bulk(headers, { ids, approve: true });
        expect(answer.status).toBe(200);
        expect(answer.json.results?.map((result) => [result.ok, result.error?.code])).toEqual([
          [true, undefined],
          [false, code],
          [true, undefined],
        ]);
      } finally {
        await db.$executeRawUnsafe(`DROP TRIGGER deadlock_${suffix} ON requests`);
        await db.$executeRawUnsafe(`DROP FUNCTION deadlock_${suffix}()`);
      }
      expect(await statusOf(victim)).toBe("pending");
    },
  );

  it("all pending from one agent: only that agent's, only the Lead's to decide", async () => {
    const { headers } = await lead();
    const agent = await registerAgent();
    const other = await registerAgent();
    const mine = [await riskyCall(agent, "git push a"), await riskyCall(agent, "git push b")];
    const theirs = await riskyCall(other, "git push c");
    // A request the Lead sent to the agent is the agent's to answer, never in the Lead's batch.
    await api.requestShutdown(headers, agent.name, {});

    const { status, json } = await bulk(headers, { agent: agent.name, approve: true });
    expect(status).toBe(200);
    expect(json.results?.map((result) => result.id)).toEqual(mine);
    expect(json.results?.every((result) => result.ok)).toBe(true);
    expect(await statusOf(theirs)).toBe("pending");

    const again = await bulk(headers, { agent: agent.name, approve: true });
    expect(again.json).toEqual({ results: [] });
    const missing = await bulk(headers, { agent: uniqueName("nobody"), approve: true });
    expect(missing.status).toBe(404);
    expect(missing.json.error?.code).toBe("AGENT_NOT_FOUND");
  });

  it("refuses a malformed batch whole, deciding nothing", async () => {
    const { headers } = await lead();
    const agent = await registerAgent();
    const id = await riskyCall(agent, "git push origin main");

    const duplicates = await bulk(headers, { ids: [id, id], approve: true });
    expect(duplicates.status).toBe(422);
    expect(duplicates.json.error?.code).toBe("INVALID_BATCH");

    const tooMany = Array.from({ length: 101 }, (_, index) => `req_${String(index)}`);
    const over = await bulk(headers, { ids: [id, ...tooMany.slice(1)], approve: true });
    expect(over.status).toBe(422);
    expect(over.json.error?.code).toBe("INVALID_BATCH");

    const empty = await bulk(headers, { ids: [], approve: true });
    expect(empty.status).toBe(422);

    const silent = await bulk(headers, { ids: [id], approve: false });
    expect(silent.status).toBe(422);
    expect(silent.json.error?.code).toBe("FEEDBACK_REQUIRED");

    const both = await bulk(headers, { ids: [id], agent: agent.name, approve: true });
    expect(both.status).toBe(400);
    const extra = await bulk(headers, { ids: [id], approve: true, answer: { option: "eu" } });
    expect(extra.status).toBe(400);

    expect(await statusOf(id)).toBe("pending");
  });

  it("is for Leads: not viewers, not read tokens, not agents", async () => {
    const agent = await registerAgent();
    const id = await riskyCall(agent, "git push origin main");
    const viewer = await signedInHuman("viewer");
    expect((await bulk(viewer.headers, { ids: [id], approve: true })).status).toBe(403);
    const read = await createToken("read");
    expect((await bulk(read.headers, { ids: [id], approve: true })).status).toBe(403);
    const self = await bulk(agent.headers, { ids: [id], approve: true });
    expect(self.status).toBe(403);
    expect(await statusOf(id)).toBe("pending");

    const decide = await createToken("decide");
    const { json } = await bulk(decide.headers, { ids: [id], approve: true });
    expect(json.results?.[0]).toMatchObject({
      ok: true,
      request: { decidedBy: { kind: "token", tokenId: decide.id } },
    });
  });
});
