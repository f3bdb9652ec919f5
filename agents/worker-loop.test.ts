import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { HandshakeClient } from "../lib/sdk/agent-client";
import { ApiError } from "../lib/sdk/errors";
import type { Inbox } from "../lib/shared/api/message";
import type { Model } from "./models/model";
import { Worker } from "./worker-loop";

describe("worker loop", () => {
  it("resumes from the stored ack: its first inbox read sends no cursor, later reads the server's", async () => {
    const queries: { after?: number }[] = [];
    const inboxes: Inbox[] = [{ messages: [], cursor: 41 }];
    const client = {
      me: async () => ({
        name: "alice",
        role: "builder",
        incarnation: 2,
        gate: "not_required",
        prompt: null,
        requirePlan: false,
      }),
      heartbeat: async () => ({}),
      ack: async () => ({ ackedUpTo: 41 }),
      readInbox: async (query: { after?: number }) => {
        queries.push(query);
        const next = inboxes.shift();
        // A revoked token ends the loop quietly, as at a respawn.
        if (!next) throw new ApiError(401, "UNAUTHENTICATED", "ended", {});
        return next;
      },
    } as unknown as HandshakeClient;
    const model: Model = { next: async () => ({ toolCalls: [] }) };
    const workspace = await mkdtemp(path.join(tmpdir(), "handshake-worker-loop-"));
    try {
      const exit = await new Worker({
        client,
        model,
        workspace,
        heartbeatMs: 60_000,
        sandbox: Promise.resolve({ status: "no_sandbox", reason: "not needed here" }),
      }).run();
      expect(exit.reason).toBe("incarnation_ended");
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
    expect(queries[0]?.after).toBeUndefined();
    expect(queries[1]?.after).toBe(41);
  });
});
