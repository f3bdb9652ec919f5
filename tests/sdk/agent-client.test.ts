import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { HandshakeClient } from "../../lib/sdk/agent-client";
import { LeadClient } from "../../lib/sdk/lead-client";
import { RECENT_GONE_ON_BOARD } from "../../lib/shared/agents/board";
import { startHandshake, type Handshake } from "../support/handshake-cli";

// The SDK parses every answer with a schema: each call here would throw INVALID_RESPONSE if the
// schema it uses disagreed with what the route really returns.
let handshake: Handshake;
let agent: HandshakeClient;

beforeAll(async () => {
  handshake = await startHandshake();
  const connect = new LeadClient(handshake.url, handshake.connect.token);
  const session = await connect.connectSession({ sessionId: randomUUID(), cwd: tmpdir() });
  agent = new HandshakeClient(handshake.url, session.token, { maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await handshake.stop();
  await getDb().$disconnect();
});

describe("HandshakeClient against the real API", () => {
  it("reads a heartbeat's answer (the agent, without its pending requests) and its own record", async () => {
    const beat = await agent.heartbeat("working");
    expect(beat.status).toBe("working");
    const me = await agent.me();
    expect(me.name).toBe(beat.name);
    expect(me.pendingRequests).toEqual([]);
  });
});

describe("LeadClient against the real API", () => {
  // The supervisor recovers its workers from this roster after a restart: one offline for days
  // is gone from the board's default view (decision 091), not from the supervisor's.
  it("lists every agent, those the board leaves out included", async () => {
    const prefix = `sdk-gone-${randomUUID().slice(0, 8)}`;
    const offline = `${prefix}-worker`;
    await getDb().$executeRaw`
      INSERT INTO agents (name, role, status, token_hash, updated_at)
      VALUES (${offline}, 'worker', 'offline', ${`${offline}-token`}, now() - interval '2 days')`;
    await getDb().$executeRaw`
      INSERT INTO agents (name, role, status, token_hash, updated_at)
      SELECT ${prefix} || '-' || n, 'session', 'shutdown', ${prefix} || '-token-' || n,
             now() - interval '1 day'
      FROM generate_series(1, ${RECENT_GONE_ON_BOARD + 1}) AS n`;
    const names = (await handshake.lead.listAgents()).map((listed) => listed.name);
    expect(names).toContain(offline);
  });
});
