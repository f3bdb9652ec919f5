import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { POST as login } from "../../app/api/v1/auth/login/route";
import { MAX_FAILURES_PER_CLIENT, MAX_FAILURES_PER_EMAIL } from "../../lib/auth/sign-in-limit";
import { getDb } from "../../lib/db";
import { createUser } from "../../lib/users/mutations";
import { callRoute } from "../route-client";

afterAll(() => getDb().$disconnect());

async function newUser() {
  const email = `limit-${randomBytes(4).toString("hex")}@example.com`;
  const password = "right-password-123";
  await createUser(getDb(), { email, password, role: "viewer" });
  return { email, password };
}

function attempt(email: string, password: string, clientIp: string) {
  return callRoute(login, {
    body: { email, password },
    headers: { "x-handshake-client-ip": clientIp },
  });
}

describe("sign-in rate limiting", () => {
  it("after too many failures for an account, even the right password gets 429 with Retry-After", async () => {
    const user = await newUser();
    for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
      expect((await attempt(user.email, "wrong-guess", `10.0.0.${i}`)).status).toBe(401);
    }
    const limited = await attempt(user.email, user.password, "10.0.1.1");
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ error: { code: "RATE_LIMITED" } });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(limited.headers.getSetCookie()).toEqual([]);
  });

  it("limits one client guessing across many accounts", async () => {
    const clientIp = `192.0.2.${randomBytes(1)[0]}`;
    const users = await Promise.all(
      Array.from({ length: Math.ceil(MAX_FAILURES_PER_CLIENT / 4) }, () => newUser()),
    );
    let failures = 0;
    for (const user of users) {
      for (let i = 0; i < 4 && failures < MAX_FAILURES_PER_CLIENT; i++, failures++) {
        expect((await attempt(user.email, "wrong", clientIp)).status).toBe(401);
      }
    }
    const fresh = await newUser();
    expect((await attempt(fresh.email, fresh.password, clientIp)).status).toBe(429);
    expect((await attempt(fresh.email, fresh.password, "198.51.100.7")).status).toBe(200);
  });

  it("a successful sign-in clears the account's failures", async () => {
    const user = await newUser();
    for (let i = 0; i < MAX_FAILURES_PER_EMAIL - 1; i++)
      await attempt(user.email, "wrong", "203.0.113.1");
    expect((await attempt(user.email, user.password, "203.0.113.1")).status).toBe(200);
    for (let i = 0; i < MAX_FAILURES_PER_EMAIL - 1; i++) {
      expect((await attempt(user.email, "wrong", "203.0.113.2")).status).toBe(401);
    }
    expect((await attempt(user.email, user.password, "203.0.113.2")).status).toBe(200);
  });
});
