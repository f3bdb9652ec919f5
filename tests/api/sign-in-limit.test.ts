import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it, vi } from "vitest";
import { login } from "../../lib/api/v1/auth";
import { readSignInLimits } from "../../lib/auth/sign-in-limit";
import { getDb } from "../../lib/db";
import { createUser } from "../../lib/users/mutations";
import { callRoute } from "../route-client";

afterAll(() => getDb().$disconnect());

const { maxFailures, maxClientFailures, windowSeconds } = readSignInLimits();

async function newUser() {
  const email = `limit-${randomBytes(4).toString("hex")}@example.com`;
  const password = "right-password-123";
  await createUser(getDb(), { email, password, role: "viewer" });
  return { email, password };
}

function attempt(email: string, password: string, clientIp: string, device?: string) {
  return callRoute(login.POST, {
    body: { email, password, ...(device === undefined ? {} : { device }) },
    headers: { "x-handshake-client-ip": clientIp },
  });
}

/** The device token a successful sign-in answered. */
function deviceOf(response: Awaited<ReturnType<typeof attempt>>): string {
  const device = (response.json as { device?: unknown } | null)?.device;
  if (typeof device !== "string") throw new Error("no device token was answered");
  return device;
}

describe("sign-in rate limiting", () => {
  it("after too many failures for an account, even the right password gets 429 with Retry-After", async () => {
    const user = await newUser();
    for (let i = 0; i < maxFailures; i++) {
      expect((await attempt(user.email, "wrong-guess", `10.0.0.${i}`)).status).toBe(401);
    }
    const limited = await attempt(user.email, user.password, "10.0.1.1");
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ error: { code: "RATE_LIMITED" } });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
    expect(limited.headers.getSetCookie()).toEqual([]);
  });

  it("counts failures by the database's clock, through a web node whose clock is behind", async () => {
    const user = await newUser();
    // The node's clock a whole window behind: failures it stamped itself would be out of it.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() - 2 * windowSeconds * 1000 });
    try {
      for (let i = 0; i < maxFailures; i++) {
        expect((await attempt(user.email, "wrong-guess", `10.9.0.${i}`)).status).toBe(401);
      }
      expect((await attempt(user.email, user.password, "10.9.1.1")).status).toBe(429);
    } finally {
      vi.useRealTimers();
    }
  });

  it("checks at most the limit of passwords when guesses arrive in parallel", async () => {
    const user = await newUser();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => attempt(user.email, `wrong-${i}`, `10.1.0.${i}`)),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(maxFailures);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - maxFailures);
  });

  it("limits one client guessing across many accounts", async () => {
    const clientIp = `192.0.2.${randomBytes(1)[0]}`;
    const users = await Promise.all(
      Array.from({ length: Math.ceil(maxClientFailures / 4) }, () => newUser()),
    );
    let failures = 0;
    for (const user of users) {
      for (let i = 0; i < 4 && failures < maxClientFailures; i++, failures++) {
        expect((await attempt(user.email, "wrong", clientIp)).status).toBe(401);
      }
    }
    const fresh = await newUser();
    expect((await attempt(fresh.email, fresh.password, clientIp)).status).toBe(429);
    expect((await attempt(fresh.email, fresh.password, "198.51.100.7")).status).toBe(200);
  });

  it("a successful sign-in clears the account's failures", async () => {
    const user = await newUser();
    for (let i = 0; i < maxFailures - 1; i++) await attempt(user.email, "wrong", "203.0.113.1");
    expect((await attempt(user.email, user.password, "203.0.113.1")).status).toBe(200);
    for (let i = 0; i < maxFailures - 1; i++) {
      expect((await attempt(user.email, "wrong", "203.0.113.2")).status).toBe(401);
    }
    expect((await attempt(user.email, user.password, "203.0.113.2")).status).toBe(200);
  });
});

describe("a browser that signed in before (device token)", () => {
  it("still signs in with the right password while strangers on the same address have the account limited", async () => {
    const user = await newUser();
    const sharedIp = "198.51.100.20";
    const device = deviceOf(await attempt(user.email, user.password, sharedIp));
    for (let i = 0; i < maxFailures; i++) {
      expect((await attempt(user.email, "stranger-guess", sharedIp)).status).toBe(401);
    }
    expect((await attempt(user.email, user.password, sharedIp)).status).toBe(429);
    const owner = await attempt(user.email, user.password, sharedIp, device);
    expect(owner.status).toBe(200);
    // Strangers stay limited after the owner's sign-in.
    expect((await attempt(user.email, "stranger-guess", sharedIp)).status).toBe(429);
  });

  it("is limited on its own after its own failures", async () => {
    const user = await newUser();
    const device = deviceOf(await attempt(user.email, user.password, "198.51.100.30"));
    for (let i = 0; i < maxFailures; i++) {
      expect((await attempt(user.email, "typo", "198.51.100.30", device)).status).toBe(401);
    }
    expect((await attempt(user.email, user.password, "198.51.100.30", device)).status).toBe(429);
    // The device's failures did not limit the account for another browser.
    expect((await attempt(user.email, user.password, "198.51.100.31")).status).toBe(200);
  });

  it("is never a cookie, which a server on another port of the host would receive", async () => {
    // Red team, round ten: such a server spent the Lead's own browser's failures with it.
    const user = await newUser();
    const signedIn = await attempt(user.email, user.password, "198.51.100.50");
    const device = deviceOf(signedIn);
    expect(signedIn.headers.getSetCookie().join("\n")).not.toContain(device);
    for (let i = 0; i < maxFailures; i++) {
      expect((await attempt(user.email, "guess", "198.51.100.51")).status).toBe(401);
    }
    const asCookie = await callRoute(login.POST, {
      body: { email: user.email, password: user.password },
      headers: { "x-handshake-client-ip": "198.51.100.51", cookie: `handshake.device=${device}` },
    });
    expect(asCookie.status).toBe(429);
    expect((await attempt(user.email, user.password, "198.51.100.51", device)).status).toBe(200);
  });

  it("counts as a stranger when the token is forged or was issued for another account", async () => {
    const owner = await newUser();
    const other = await newUser();
    const otherDevice = deviceOf(await attempt(other.email, other.password, "198.51.100.40"));
    const [deviceId] = otherDevice.split(".");
    const forgeries = [otherDevice, `${deviceId}.${"A".repeat(43)}`, "garbage"];
    for (let i = 0; i < maxFailures; i++) {
      expect((await attempt(owner.email, "guess", "198.51.100.41")).status).toBe(401);
    }
    for (const forged of forgeries) {
      expect((await attempt(owner.email, owner.password, "198.51.100.41", forged)).status).toBe(
        429,
      );
    }
  });
});
