import pg from "pg";
import { describe, expect, it } from "vitest";
import { EVICTIONS_APPLICATION_NAME } from "../../lib/auth/actor-evictions";
import { createApiToken } from "../../lib/tokens/mutations";
import { createHuman, signIn, sleep } from "../support/reliability";
import { callNode, runTwoNodesDuringFile, type Credential } from "../support/two-nodes-hooks";

// Two web nodes (separate processes, separate caches) on one database. A change made through one
// node, or straight in the database, must stop the other node's cached answer within a second
// (decisions 027 and 044): the triggers of migrations 014 and 023 notify, the other node's
// listener evicts.

const REVOCATION_BOUND_MS = 1_000;

const nodes = runTwoNodesDuringFile("handshake_actor_cache");

/**
 * Calls node B repeatedly and returns when, after the change, the first call it refused was sent:
 * a call's own time on a loaded machine is not the node's staleness.
 */
async function msUntilRefused(path: string, token: Credential): Promise<number> {
  const started = Date.now();
  for (;;) {
    const sentAt = Date.now();
    const { status } = await callNode(nodes.b, "GET", path, token);
    if (status === 401) return sentAt - started;
    if (Date.now() - started > 5_000) return Infinity;
    await sleep(10);
  }
}

/** Several calls on B, so its answer comes from its cache when a cache is on. */
async function warm(path: string, token: Credential): Promise<void> {
  for (let round = 0; round < 3; round += 1) {
    expect((await callNode(nodes.b, "GET", path, token)).status).toBe(200);
  }
}

describe("the actor cache across nodes", () => {
  it("a token revoked on one node is refused by the other within a second", async () => {
    const owner = await createHuman(nodes.db, "lead");
    const issued = await createApiToken(nodes.db, owner.userId, {
      name: "revoke-me",
      scope: "decide",
    });
    await warm("/api/v1/requests", issued.token);
    expect(
      (await callNode(nodes.a, "DELETE", `/api/v1/tokens/${issued.id}`, nodes.leadToken)).status,
    ).toBe(200);
    expect(await msUntilRefused("/api/v1/requests", issued.token)).toBeLessThan(
      REVOCATION_BOUND_MS,
    );
  });

  it("a session signed out on one node is refused by the other within a second (decision 044)", async () => {
    const human = await createHuman(nodes.db, "lead");
    const session = await signIn(nodes.a.url, human);
    await warm("/api/v1/requests", session);
    expect((await callNode(nodes.a, "POST", "/api/v1/auth/logout", session)).status).toBe(200);
    expect(await msUntilRefused("/api/v1/requests", session)).toBeLessThan(REVOCATION_BOUND_MS);
  });

  it("a user disabled on one node loses their tokens on the other", async () => {
    const owner = await createHuman(nodes.db, "lead");
    const issued = await createApiToken(nodes.db, owner.userId, { name: "owner", scope: "decide" });
    await warm("/api/v1/requests", issued.token);
    const disabled = await callNode(
      nodes.a,
      "PATCH",
      `/api/v1/users/${owner.userId}`,
      nodes.leadToken,
      { disabled: true },
    );
    expect(disabled.status).toBe(200);
    expect(await msUntilRefused("/api/v1/requests", issued.token)).toBeLessThan(
      REVOCATION_BOUND_MS,
    );
  });

  it("an agent's token from an ended incarnation is refused by the other node", async () => {
    const registered = await callNode(nodes.a, "POST", "/api/v1/agents", nodes.leadToken, {
      name: "cache-stale",
      role: "tester",
    });
    expect(registered.status).toBe(201);
    const oldToken = String(registered.json.token);
    await warm("/api/v1/me", oldToken);
    const stopped = await callNode(
      nodes.a,
      "POST",
      "/api/v1/agents/cache-stale/force-stop",
      nodes.leadToken,
    );
    expect(stopped.status).toBe(200);
    expect(await msUntilRefused("/api/v1/me", oldToken)).toBeLessThan(REVOCATION_BOUND_MS);

    const respawned = await callNode(
      nodes.a,
      "POST",
      "/api/v1/agents/cache-stale/respawn",
      nodes.leadToken,
    );
    expect(respawned.status).toBe(201);
    await warm("/api/v1/me", String(respawned.json.token));
    expect((await callNode(nodes.b, "GET", "/api/v1/me", oldToken)).status).toBe(401);
  });

  it("a revocation written straight to the database reaches every node", async () => {
    const owner = await createHuman(nodes.db, "lead");
    const issued = await createApiToken(nodes.db, owner.userId, { name: "sql", scope: "decide" });
    await warm("/api/v1/requests", issued.token);
    await nodes.db
      .$executeRaw`UPDATE api_tokens SET revoked_at = now() WHERE id = ${issued.id}::uuid`;
    expect(await msUntilRefused("/api/v1/requests", issued.token)).toBeLessThan(
      REVOCATION_BOUND_MS,
    );
  });

  it("a node whose listener is cut refuses what was revoked meanwhile, and listens again", async () => {
    const owner = await createHuman(nodes.db, "lead");
    const issued = await createApiToken(nodes.db, owner.userId, { name: "cut", scope: "decide" });
    await warm("/api/v1/requests", issued.token);
    const admin = new pg.Client({ connectionString: nodes.databaseUrl });
    await admin.connect();
    try {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [EVICTIONS_APPLICATION_NAME],
      );
      // Sent while no node listens: the notification is lost for good.
      await admin.query("UPDATE api_tokens SET revoked_at = now() WHERE id = $1", [issued.id]);
      expect(await msUntilRefused("/api/v1/requests", issued.token)).toBeLessThan(
        REVOCATION_BOUND_MS,
      );
      for (let attempt = 0; attempt < 100; attempt += 1) {
        const { rows } = await admin.query<{ count: string }>(
          "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
          [EVICTIONS_APPLICATION_NAME],
        );
        if (Number(rows[0]?.count) === 2) break;
        await sleep(50);
      }
      const { rows } = await admin.query<{ count: string }>(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [EVICTIONS_APPLICATION_NAME],
      );
      expect(Number(rows[0]?.count)).toBe(2);
    } finally {
      await admin.end();
    }
  });
});
