import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { HandshakeClient } from "../../lib/sdk/agent-client";
import { LeadClient } from "../../lib/sdk/lead-client";
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
