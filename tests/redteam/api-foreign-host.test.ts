import { afterAll, describe, expect, it } from "vitest";
import { login } from "../../lib/api/v1/auth";
import { getDb } from "../../lib/db";
import { callRoute, signedInHuman } from "../route-client";

afterAll(() => getDb().$disconnect());

/**
 * Red team (defect): a hostile page that DNS-rebinds its own name to the loopback address talks to
 * the API same-origin (Host and Origin both its own name, Sec-Fetch-Site same-origin). The socket
 * refuses such a Host (lib/realtime/console-origin.ts: "a loopback name or HOST, as the sign-in
 * accepts"), but the API answers whatever Host it is sent: the page can sign in, and can spend the
 * account's and 127.0.0.1's failure buckets, locking the Lead out of a new browser.
 */
describe("a DNS-rebound page on the API (red team)", () => {
  const rebound = { host: "rebound.example:3000", origin: "http://rebound.example:3000" };

  it("cannot sign in through a Host that is neither a loopback name nor HOST", async () => {
    const lead = await signedInHuman("lead");
    const response = await callRoute(login.POST, {
      body: { email: lead.email, password: lead.password },
      headers: { ...rebound, "sec-fetch-site": "same-origin" },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.headers.getSetCookie().join("\n")).not.toContain("session_token=");
    // A page may add headers of its own to a same-origin request: naming this server in one that
    // proxies use changes nothing, as only the Host the browser sent is read.
    const forwarded = await callRoute(login.POST, {
      body: { email: lead.email, password: lead.password },
      headers: {
        ...rebound,
        "sec-fetch-site": "same-origin",
        "x-forwarded-host": "127.0.0.1:3000",
      },
    });
    expect(forwarded.status).toBe(403);
    expect(forwarded.headers.getSetCookie().join("\n")).not.toContain("session_token=");
  });

  it("cannot lock the Lead out by guessing through the rebound name", async () => {
    const lead = await signedInHuman("lead");
    for (let guess = 0; guess < 5; guess++) {
      await callRoute(login.POST, {
        body: { email: lead.email, password: `wrong-password-${guess}` },
        headers: { ...rebound, "sec-fetch-site": "same-origin" },
      });
    }
    const own = await callRoute(login.POST, {
      body: { email: lead.email, password: lead.password },
    });
    expect(own.status).toBe(200);
  });
});
