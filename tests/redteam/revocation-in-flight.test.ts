import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { rules as rulesRoute } from "../../lib/api/v1/rules";
import { user as userRoute } from "../../lib/api/v1/users";
import {
  api,
  createToken,
  lead,
  registerWorker,
  uniqueName,
  type ApiResponse,
} from "../api/fixtures";
import { callRoute, signedInHuman } from "../route-client";
import { holdLock } from "../support/held-lock";

afterAll(() => getDb().$disconnect());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A call whose token was read as live before its revocation committed, and whose work runs after:
 * the token row is held, the revocation queues on it, then the call (its `lastUsedAt` write
 * queues too, so the call reads the token before the revocation and acts after it).
 */
async function callAcrossRevocation<T extends { status: number }>(
  tokenId: string,
  call: () => Promise<T>,
): Promise<{ revoked: ApiResponse; inFlight: T }> {
  await getDb().apiToken.update({
    where: { id: tokenId },
    data: { lastUsedAt: new Date(Date.now() - 120_000) },
  });
  const held = await holdLock("SELECT 1 FROM api_tokens WHERE id = $1 FOR UPDATE", [tokenId]);
  const revoking = api.revokeToken((await lead()).headers, tokenId);
  await held.untilWaiting(1);
  const inFlight = call();
  await held.untilWaiting(2);
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

  it("a supervisor token's worker token is refused, and the worker's own token still works", async () => {
    const worker = await registerWorker();
    const supervisor = await createToken("supervisor");

    const { revoked, inFlight } = await callAcrossRevocation(supervisor.id, () =>
      api.workerToken(supervisor.headers, worker.name),
    );

    expect(revoked.status).toBe(200);
    expect(inFlight.status).toBe(401);
    expect(inFlight.json.token).toBeUndefined();
    expect((await api.me(worker.headers)).status).toBe(200);
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

  // Red team, second pass: the same window let a revoked admin token add a Lead, register an
  // agent and add a standing allow rule (and promote a viewer: updateUser holds its caller too).
  const lastingChanges: [
    string,
    (headers: Record<string, string>) => Promise<{ status: number }>,
  ][] = [
    [
      "add a Lead",
      (headers: Record<string, string>) =>
        api.createUser(headers, {
          email: `${uniqueName("added")}@example.com`,
          password: "a long enough password",
          role: "lead",
        }),
    ],
    [
      "register an agent",
      (headers: Record<string, string>) =>
        api.registerAgent(headers, { name: uniqueName("minted"), role: "x" }),
    ],
    [
      "add an allow rule",
      (headers: Record<string, string>) =>
        callRoute(rulesRoute.POST, {
          path: "/api/v1/rules",
          headers,
          body: {
            pattern: "bash(rm -rf /tmp/x)",
            effect: "allow",
            scope: { kind: "role", role: uniqueName("role") },
          },
        }),
    ],
  ];
  it.each(lastingChanges)("an admin token being revoked cannot %s", async (_what, call) => {
    const admin = await createToken("admin");
    const { revoked, inFlight } = await callAcrossRevocation(admin.id, () => call(admin.headers));
    expect(revoked.status).toBe(200);
    expect(inFlight.status).toBe(401);
  });

  it("a signed-in Lead disabled while adding an account adds it before the disable, or not at all", async () => {
    const adder = await signedInHuman("lead");
    const adderId = (await getDb().user.findUniqueOrThrow({ where: { email: adder.email } })).id;
    const email = `${uniqueName("added")}@example.com`;
    // An uncommitted account of the same email holds the insert back until the disable is sent.
    const held = await holdLock(
      "INSERT INTO users (id, name, email, role) VALUES ($1, 'holder', $2, 'viewer')",
      [uniqueName("holder"), email],
    );
    const finished: string[] = [];
    const adding = api
      .createUser(adder.headers, { email, password: "a long enough password", role: "lead" })
      .finally(() => finished.push("add"));
    await held.untilWaiting(1);
    const disabling = callRoute(userRoute.PATCH, {
      path: `/api/v1/users/${adderId}`,
      body: { disabled: true },
      headers: (await lead()).headers,
      params: { id: adderId },
    }).finally(() => finished.push("disable"));
    await pause(300);
    await held.query("ROLLBACK");
    await held.release().catch(() => undefined);

    expect((await disabling).status).toBe(200);
    const added = await adding;
    if (added.status === 201) expect(finished).toEqual(["add", "disable"]);
    else expect(added.status).toBe(401);
  });
});
