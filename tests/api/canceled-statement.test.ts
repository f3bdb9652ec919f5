import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { getDb } from "../../lib/db";
import { requireDatabaseUrl } from "../../lib/env";
import { holdLock } from "../support/held-lock";
import { api, createToken, lead, registerAgent, submitPlan } from "./fixtures";

// `LOCK TABLE` holds every file's inserts, and a cancel must reach only this file's statements: on
// a database of its own (decision 079).
await vi.hoisted(async () => {
  const { useOwnDatabase } = await import("../support/own-database");
  await useOwnDatabase("handshake_canceled");
});

const db = getDb();
afterAll(() => db.$disconnect());

/** Cancels the statements of these backends, as an operator's `pg_cancel_backend` does. */
async function cancel(pids: number[]): Promise<void> {
  const admin = new pg.Client({ connectionString: requireDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query("SELECT pg_cancel_backend(pid) FROM unnest($1::int[]) AS pid", [pids]);
  } finally {
    await admin.end();
  }
}

type HeldLock = Awaited<ReturnType<typeof holdLock>>;

/** `call`'s answer once its statement, queued behind `held`, is canceled; the lock is let go. */
async function canceledBehind<T>(held: HeldLock, call: Promise<T>): Promise<T> {
  try {
    await cancel(await held.untilWaiting(1));
    return await call;
  } finally {
    await held.release();
  }
}

/**
 * Seen in round nine and left then: a statement PostgreSQL canceled (an operator's
 * `pg_cancel_backend`, a statement timeout) answered 500 INTERNAL, though it changed nothing and
 * a retry would land.
 */
describe("a change whose statement the database cancels", () => {
  it.each([
    // The grouped statement skips a locked agent: the plan takes the full path, and waits there.
    [
      "a plan submission's transaction (its agent's row held)",
      (agentId: string) => holdLock("SELECT 1 FROM agents WHERE id = $1 FOR UPDATE", [agentId]),
    ],
    [
      "a grouped plan submission's one statement (the table held)",
      () => holdLock("LOCK TABLE requests IN SHARE MODE"),
    ],
  ])("%s: a retryable 503 that stored nothing", async (_what, hold) => {
    const agent = await registerAgent();
    const row = await db.agent.findUniqueOrThrow({ where: { name: agent.name } });
    const held = await hold(row.id);
    const refused = await canceledBehind(held, submitPlan(agent, "1. wait behind the lock"));
    expect(refused.status, JSON.stringify(refused.json)).toBe(503);
    expect(refused.json).toMatchObject({ error: { code: "STATEMENT_CANCELED" } });
    expect(await db.request.count({ where: { agentId: row.id } })).toBe(0);
    expect((await submitPlan(agent, "1. again")).status).toBe(201);
  });

  it("a token's revocation in a transaction: a retryable 503 that left the token live", async () => {
    const headers = (await lead()).headers;
    const connect = await createToken("connect");
    const held = await holdLock("SELECT 1 FROM api_tokens WHERE id = $1 FOR UPDATE", [connect.id]);
    const refused = await canceledBehind(held, api.revokeToken(headers, connect.id));
    expect(refused.status, JSON.stringify(refused.json)).toBe(503);
    expect(refused.json).toMatchObject({ error: { code: "STATEMENT_CANCELED" } });
    const token = await db.apiToken.findUniqueOrThrow({ where: { id: connect.id } });
    expect(token.revokedAt).toBeNull();
    expect((await api.revokeToken(headers, connect.id)).status).toBe(200);
  });
});
