import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { PrismaClient } from "../../lib/generated/prisma/client";
import { applyMigrations } from "../../lib/migrations";
import type { callRoute as CallRoute, signedInHuman as SignedInHuman } from "../route-client";
import { createScratchDatabase, dropScratchDatabase } from "../test-database";

// "The last active Lead" is about every Lead in the database, so this file runs on a database of
// its own: other files' Leads would otherwise count, and disabling them would break those files.

type Handler = Parameters<typeof CallRoute>[0];
type Human = Awaited<ReturnType<typeof SignedInHuman>>;

let adminUrl: string;
let databaseUrl: string;
let callRoute: typeof CallRoute;
let signedInHuman: typeof SignedInHuman;
let patchUser: Handler;
let login: Handler;
let createToken: Handler;
let listAgents: Handler;
let registerAgent: Handler;
let db: PrismaClient;

beforeAll(async () => {
  adminUrl = inject("adminDatabaseUrl");
  databaseUrl = await createScratchDatabase(adminUrl, "handshake_users");
  await applyMigrations(databaseUrl, { isQuiet: true });
  process.env.DATABASE_URL = databaseUrl;
  // Loaded only now, so every module binds to this file's own database.
  ({ callRoute, signedInHuman } = await import("../route-client"));
  ({ PATCH: patchUser } = (await import("../../lib/api/v1/users")).user);
  ({ POST: login } = (await import("../../lib/api/v1/auth")).login);
  ({ POST: createToken } = (await import("../../lib/api/v1/tokens")).tokens);
  ({ GET: listAgents, POST: registerAgent } = (await import("../../lib/api/v1/agents")).agents);
  db = (await import("../../lib/db")).getDb();
});

afterAll(async () => {
  await db?.$disconnect();
  await dropScratchDatabase(adminUrl, databaseUrl);
});

async function idOf(human: Human): Promise<string> {
  return (await db.user.findUniqueOrThrow({ where: { email: human.email } })).id;
}

function patch(id: string, body: unknown, headers: Record<string, string>) {
  return callRoute(patchUser, { method: "PATCH", body, params: { id }, headers });
}

async function onlyLeadsAre(...keep: Human[]) {
  const emails = keep.map((human) => human.email);
  await db.user.updateMany({
    where: { role: "lead", email: { notIn: emails } },
    data: { role: "viewer" },
  });
}

describe("PATCH /api/v1/users/{id}", () => {
  it("lets a Lead change a role and disable a user, and refuses viewers", async () => {
    const lead = await signedInHuman("lead");
    const viewer = await signedInHuman("viewer");
    const other = await signedInHuman("viewer");
    const otherId = await idOf(other);
    const byViewer = await patch(otherId, { role: "lead" }, viewer.headers);
    expect(byViewer.status).toBe(403);
    expect((await patch(otherId, { role: "lead" }, {})).status).toBe(401);
    const agent = await callRoute(registerAgent, {
      body: { name: `users-${randomBytes(3).toString("hex")}`, role: "tester" },
      headers: lead.headers,
    });
    const byAgent = await patch(
      otherId,
      { role: "lead" },
      { authorization: `Bearer ${String(agent.json?.token)}` },
    );
    expect(byAgent.status).toBe(403);
    expect((await db.user.findUniqueOrThrow({ where: { id: otherId } })).role).toBe("viewer");
    const promoted = await patch(otherId, { role: "lead" }, lead.headers);
    expect(promoted.status).toBe(200);
    expect(promoted.json).toMatchObject({ id: otherId, role: "lead", disabled: false });
    const disabled = await patch(otherId, { disabled: true }, lead.headers);
    expect(disabled.json).toMatchObject({ role: "lead", disabled: true });
    const events = await db.event.findMany({ where: { subject: `user:${otherId}` } });
    expect(events.map((event) => event.kind)).toEqual(["user.updated", "user.updated"]);
  });

  it.each([
    ["an empty body", {}],
    ["an unknown role", { role: "owner" }],
    ["a string for disabled", { disabled: "yes" }],
    ["an extra field", { role: "viewer", email: "x@example.com" }],
  ])("refuses %s with 400 and changes nothing", async (_what, body) => {
    const lead = await signedInHuman("lead");
    const viewer = await signedInHuman("viewer");
    const response = await patch(await idOf(viewer), body, lead.headers);
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
    expect(await db.user.findUniqueOrThrow({ where: { email: viewer.email } })).toMatchObject({
      role: "viewer",
      disabledAt: null,
    });
  });

  it("answers an unknown id with 404", async () => {
    const lead = await signedInHuman("lead");
    const response = await patch("no-such-user", { role: "lead" }, lead.headers);
    expect(response.status).toBe(404);
    expect(response.json).toMatchObject({ error: { code: "USER_NOT_FOUND" } });
  });
});

describe("the last active Lead", () => {
  it("cannot be demoted or disabled, by anyone including themselves (409, nothing changed)", async () => {
    const lead = await signedInHuman("lead");
    await onlyLeadsAre(lead);
    const leadId = await idOf(lead);
    for (const body of [
      { role: "viewer" },
      { disabled: true },
      { role: "viewer", disabled: true },
    ]) {
      const response = await patch(leadId, body, lead.headers);
      expect(response.status).toBe(409);
      expect(response.json).toMatchObject({ error: { code: "LAST_ACTIVE_LEAD" } });
    }
    expect(await db.user.findUniqueOrThrow({ where: { id: leadId } })).toMatchObject({
      role: "lead",
      disabledAt: null,
    });
  });

  it("a disabled Lead does not count: the one active Lead stays", async () => {
    const active = await signedInHuman("lead");
    const soonDisabled = await signedInHuman("lead");
    await onlyLeadsAre(active, soonDisabled);
    expect((await patch(await idOf(soonDisabled), { disabled: true }, active.headers)).status).toBe(
      200,
    );
    const response = await patch(await idOf(active), { role: "viewer" }, active.headers);
    expect(response.status).toBe(409);
  });

  it("two Leads demoting each other at once: exactly one succeeds", async () => {
    const first = await signedInHuman("lead");
    const second = await signedInHuman("lead");
    await onlyLeadsAre(first, second);
    const [a, b] = await Promise.all([
      patch(await idOf(second), { role: "viewer" }, first.headers),
      patch(await idOf(first), { role: "viewer" }, second.headers),
    ]);
    // The loser is refused by the lock (409) or, if it arrives after the commit, as a viewer (403).
    expect([a.status, b.status].filter((status) => status === 200)).toHaveLength(1);
    expect([a.status, b.status].some((status) => status === 409 || status === 403)).toBe(true);
    expect(await db.user.count({ where: { role: "lead", disabledAt: null } })).toBe(1);
  });

  it("two demotions already past the role check serialise on the lock: the second is refused, its caller demoted", async () => {
    const { updateUser } = await import("../../lib/users/mutations");
    const first = await signedInHuman("lead");
    const second = await signedInHuman("lead");
    await onlyLeadsAre(first, second);
    const actorOf = async (human: Human) => ({
      kind: "human" as const,
      userId: await idOf(human),
      email: human.email,
      name: human.email,
      role: "lead" as const,
      via: "session" as const,
      sessionId: `session-of-${human.email}`,
      sessionKeyHash: "not a key: called in-process",
    });
    const results = await Promise.allSettled([
      updateUser(db, await actorOf(first), await idOf(second), { role: "viewer" }),
      updateUser(db, await actorOf(second), await idOf(first), { role: "viewer" }),
    ]);
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    const refusal = results.find((result) => result.status === "rejected");
    // The first demoted the second's caller, who no longer acts as a Lead once it holds the lock.
    expect(refusal?.reason).toMatchObject({ code: "FORBIDDEN" });
    expect(await db.user.count({ where: { role: "lead", disabledAt: null } })).toBeGreaterThan(0);
  });
});

describe("a disabled user", () => {
  it("loses their session, cannot sign in with the right password, and their API tokens stop working", async () => {
    const lead = await signedInHuman("lead");
    const other = await signedInHuman("lead");
    const token = await callRoute(createToken, {
      body: { name: "ci", scope: "read" },
      headers: other.headers,
    });
    expect(token.status).toBe(201);
    const bearer = { authorization: `Bearer ${String(token.json?.token)}` };
    expect((await callRoute(listAgents, { headers: bearer })).status).toBe(200);

    expect((await patch(await idOf(other), { disabled: true }, lead.headers)).status).toBe(200);

    expect((await callRoute(listAgents, { headers: other.headers })).status).toBe(401);
    expect((await callRoute(listAgents, { headers: bearer })).status).toBe(401);
    const rightPassword = await callRoute(login, {
      body: { email: other.email, password: other.password },
    });
    expect(rightPassword.status).toBe(403);
    expect(rightPassword.json).toMatchObject({ error: { code: "USER_DISABLED" } });
    expect(rightPassword.headers.getSetCookie()).toEqual([]);
    const wrongPassword = await callRoute(login, {
      body: { email: other.email, password: `wrong-${randomBytes(4).toString("hex")}` },
    });
    expect(wrongPassword.status).toBe(401);
    expect(await db.session.count({ where: { userId: await idOf(other) } })).toBe(0);

    expect((await patch(await idOf(other), { disabled: false }, lead.headers)).status).toBe(200);
    const again = await callRoute(login, {
      body: { email: other.email, password: other.password },
    });
    expect(again.status).toBe(200);
  });
});
