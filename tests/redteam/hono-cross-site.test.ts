import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";
import { callApi, signedInHuman } from "../route-client";

afterAll(() => getDb().$disconnect());

/**
 * Red team (held): a page on another origin, with the Lead's cookie, against the API's Hono router
 * (decision 016): it cannot mint a token, whatever it sends as Origin, Sec-Fetch-Site or body type,
 * and path tricks do not take a cookie mutation past the check.
 */
describe("cross-site requests through the Hono router (red team)", () => {
  it.each<[string, Record<string, string>, string?]>([
    ["Origin: null", { origin: "null" }],
    ["same site, other port", { origin: "http://127.0.0.1:4000" }],
    ["same-site fetch", { "sec-fetch-site": "same-site" }],
    ["a text/plain form", { origin: "https://evil.example", "content-type": "text/plain" }],
    ["dot segments", { origin: "https://evil.example" }, "/api/v1/agents/%2e%2e/tokens"],
    ["double slash", { origin: "https://evil.example" }, "/api/v1//tokens"],
    // Round ten: the origin was compared with this header when sent, which a caller chooses.
    [
      "X-Forwarded-Host naming the foreign origin",
      { origin: "http://evil.example", "x-forwarded-host": "evil.example" },
    ],
  ])("%s is refused and mints nothing", async (_label, headers, path = "/api/v1/tokens") => {
    const lead = await signedInHuman("lead");
    const name = `csrf-${Math.random().toString(36).slice(2, 8)}`;
    const response = await callApi({
      method: "POST",
      path,
      rawBody: JSON.stringify({ name, scope: "admin" }),
      headers: { "content-type": "application/json", ...lead.headers, ...headers },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.json?.token).toBeUndefined();
    expect(await getDb().apiToken.count({ where: { name } })).toBe(0);
  });
});
