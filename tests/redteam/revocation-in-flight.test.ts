import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { api, createToken, lead, uniqueName, type ApiResponse } from "../api/fixtures";
import { holdLock } from "../support/held-lock";

afterAll(() => getDb().$disconnect());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A call whose token was read as live before its revocation committed, and whose work runs after:
 * the token row is held, the revocation queues on it, then the call (its `lastUsedAt` write
 * queues too, so the call reads the token before the revocation and acts after it).
 */
async function callAcrossRevocation(
  tokenId: string,
  call: () => Promise<ApiResponse>,
): Promise<{ revoked: ApiResponse; inFlight: ApiResponse }> {
  await getDb().apiToken.update({
    where: { id: tokenId },
    data: { lastUsedAt: new Date(Date.now() - 120_000) },
  });
  const held = await holdLock("SELECT 1 FROM api_tokens WHERE id = $1 FOR UPDATE", [tokenId]);
  const revoking = api.revokeToken((await lead()).headers, tokenId);
  await pause(300);
  const inFlight = call();
  await pause(300);
  await held.release();
  return { revoked: await revoking, inFlight: await inFlight };
}

/**
 * Red team: revoking a token ends what it registered, and a registration racing the revocation
 * "either commits before it (and is ended by it) or sees it and is refused" (decision 017). A
 * respawn, a new API token and a worker token did not look: each, in flight across the
 * revocation, handed out a credential that outlived it.
 */
describe("a token revoked while its call is in flight (red team)", () => {
  it("a connect token's respawn is refused, and no agent token outlives the revocation", async () => {
    const connect = await createToken("connect");
    const name = uniqueName("laptop");
    expect((await api.registerAgent(connect.headers, { name, role: "laptop" })).status).toBe(201);
    await api.forceStop((await lead()).headers, name);

    const { revoked, inFlight } = await callAcrossRevocation(connect.id, () =>
      api.respawn(connect.headers, name),
    );

    expect(revoked.status).toBe(200);
    expect(inFlight.status).toBe(401);
    expect(inFlight.json.token).toBeUndefined();
    const agent = await getDb().agent.findUniqueOrThrow({ where: { name } });
    expect(agent.status).toBe("shutdown");
  });

  it("an admin token cannot mint another while it is being revoked", async () => {
    const admin = await createToken("admin");
    const name = uniqueName("minted");

    const { revoked, inFlight } = await callAcrossRevocation(admin.id, () =>
      api.createToken(admin.headers, { name, scope: "admin" }),
    );

    expect(revoked.status).toBe(200);
    expect(inFlight.status).toBe(401);
    expect(await getDb().apiToken.count({ where: { name } })).toBe(0);
  });
});
