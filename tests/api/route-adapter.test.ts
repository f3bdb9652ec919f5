import { afterAll, describe, expect, it } from "vitest";
import { logout as logoutPath } from "../../lib/api/v1/auth";
import { health as healthPath } from "../../lib/api/v1/health";
import { users } from "../../lib/api/v1/users";
import { callApi, callRoute, signedInHuman, type CallOptions } from "../route-client";
import { getDb } from "../../lib/db";

afterAll(() => getDb().$disconnect());

const createUserRoute = users.POST;
const logout = logoutPath.POST;
const health = healthPath.GET;

const newUser = () => ({
  email: `new-${Math.random().toString(36).slice(2)}@example.com`,
  password: "correct horse battery",
  role: "viewer",
});

describe("route adapter", () => {
  it("answers anonymous calls with 401 in the JSON error shape", async () => {
    const response = await callRoute(createUserRoute, { body: newUser() });
    expect(response.status).toBe(401);
    expect(response.json).toEqual({
      error: { code: "UNAUTHENTICATED", message: expect.any(String) },
    });
  });

  it("refuses a viewer on a lead route with 403 and creates nothing", async () => {
    const viewer = await signedInHuman("viewer");
    const body = newUser();
    const response = await callRoute(createUserRoute, { body, headers: viewer.headers });
    expect(response.status).toBe(403);
    expect(response.json).toMatchObject({ error: { code: "FORBIDDEN" } });
    expect(await getDb().user.count({ where: { email: body.email } })).toBe(0);
  });

  it("lets a lead add a user, once", async () => {
    const lead = await signedInHuman("lead");
    const body = newUser();
    const created = await callRoute(createUserRoute, { body, headers: lead.headers });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ email: body.email, role: "viewer" });
    expect(created.json).not.toHaveProperty("password");
    const again = await callRoute(createUserRoute, { body, headers: lead.headers });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: { code: "USER_EXISTS" } });
  });

  // Each case carries a new account's email, looked for afterwards: other test files add users
  // meanwhile, so the table's count says nothing.
  const json = { "content-type": "application/json" };
  it.each([
    [
      "invalid JSON",
      (user) => ({ rawBody: `{"email":"${user.email}"`, headers: json }),
      400,
      "INVALID_JSON",
    ],
    [
      "a non-JSON content type",
      (user) => ({
        rawBody: new URLSearchParams(user).toString(),
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    [
      "an oversized body",
      (user) => ({ rawBody: JSON.stringify({ ...user, name: "x".repeat(70_000) }), headers: json }),
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    ["an unknown field", (user) => ({ body: { ...user, isAdmin: true } }), 400, "INVALID_INPUT"],
    ["a wrong type", (user) => ({ body: { ...user, role: 7 } }), 400, "INVALID_INPUT"],
    [
      "a role that does not exist",
      (user) => ({ body: { ...user, role: "owner" } }),
      400,
      "INVALID_INPUT",
    ],
  ] as [string, (user: ReturnType<typeof newUser>) => CallOptions, number, string][])(
    "refuses %s with a typed error",
    async (_what, optionsFor, status, code) => {
      const lead = await signedInHuman("lead");
      const user = newUser();
      const options = optionsFor(user);
      const response = await callRoute(createUserRoute, {
        ...options,
        method: "POST",
        headers: { ...lead.headers, ...options.headers },
      });
      expect(response.status).toBe(status);
      expect(response.json).toMatchObject({ error: { code } });
      expect(await getDb().user.count({ where: { email: user.email } })).toBe(0);
    },
  );

  it("refuses a cookie-authenticated mutation from another origin", async () => {
    const lead = await signedInHuman("lead");
    const body = newUser();
    const foreign: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of foreign) {
      const response = await callRoute(createUserRoute, {
        body,
        headers: { ...lead.headers, ...headers },
      });
      expect(response.status).toBe(403);
      expect(response.json).toMatchObject({ error: { code: "CROSS_SITE_REQUEST" } });
    }
    expect(await getDb().user.count({ where: { email: body.email } })).toBe(0);
    const sameOrigin = await callRoute(createUserRoute, {
      body,
      headers: { ...lead.headers, origin: "http://127.0.0.1:3000" },
    });
    expect(sameOrigin.status).toBe(201);
  });

  it("ends the session on sign-out", async () => {
    const lead = await signedInHuman("lead");
    expect((await callRoute(logout, { method: "POST", headers: lead.headers })).status).toBe(200);
    const after = await callRoute(createUserRoute, { body: newUser(), headers: lead.headers });
    expect(after.status).toBe(401);
  });

  it("reports health with the database state", async () => {
    const response = await callRoute(health);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ ok: true, db: "up" });
  });

  it("answers unknown API paths with ROUTE_NOT_FOUND JSON", async () => {
    const response = await callApi({ path: "/api/v1/nope" });
    expect(response.status).toBe(404);
    expect(response.json).toMatchObject({ error: { code: "ROUTE_NOT_FOUND" } });
  });

  it("rejects a malformed bearer header as unauthenticated", async () => {
    const response = await callRoute(createUserRoute, {
      body: newUser(),
      headers: { authorization: "Bearer <script>" },
    });
    expect(response.status).toBe(401);
  });
});
