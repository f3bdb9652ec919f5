import { afterAll, describe, expect, it } from "vitest";
import { API_PATHS } from "../../lib/api/v1/routes";
import { getDb } from "../../lib/db";
import { API_METHODS } from "../../lib/http/router";
import { callApi } from "../route-client";
import { lead, registerAgent } from "./fixtures";

afterAll(() => getDb().$disconnect());

describe("every API path answers every method in the JSON shape", () => {
  it("finds the paths", () => {
    expect(API_PATHS.length).toBeGreaterThan(20);
  });

  it.each(API_PATHS.map((entry) => entry.path))("%s", async (template) => {
    const path = template.replace("{name}", "nobody").replace("{id}", "none");
    const refused: string[] = [];
    const allowHeaders = new Set<string | null>();
    for (const method of API_METHODS) {
      const response = await callApi({ method, path });
      expect(response.status, `${method} ${path}`).toBeLessThan(500);
      if (response.status === 405) {
        expect((response.json?.error as { code?: string }).code).toBe("METHOD_NOT_ALLOWED");
        refused.push(method);
        allowHeaders.add(response.headers.get("allow"));
      }
    }
    const implemented = API_METHODS.filter((method) => !refused.includes(method));
    expect(implemented.length).toBeGreaterThan(0);
    expect([...allowHeaders]).toEqual(refused.length > 0 ? [implemented.join(", ")] : []);
  });

  it("answers an unknown path, or a known one with a trailing segment, with ROUTE_NOT_FOUND", async () => {
    for (const path of ["/api/v1", "/api/v1/nope", "/api/v1/agents/a/b/c", "/api/v1/health/x"]) {
      const response = await callApi({ path });
      expect(response.status, path).toBe(404);
      expect(response.json, path).toMatchObject({ error: { code: "ROUTE_NOT_FOUND" } });
    }
  });

  it("answers OPTIONS with the path's methods, and HEAD as GET without a body", async () => {
    const options = await callApi({ method: "OPTIONS", path: "/api/v1/tokens" });
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe("GET, POST, OPTIONS");
    const head = await callApi({ method: "HEAD", path: "/api/v1/health" });
    expect(head.status).toBe(200);
    expect(head.json).toBeNull();
    expect((await callApi({ method: "HEAD", path: "/api/v1/heartbeat" })).status).toBe(405);
  });

  it("refuses a method outside the API's: 405 on a known path, 404 on an unknown one", async () => {
    const refused = await callApi({ method: "PROPFIND", path: "/api/v1/tokens" });
    expect(refused.status).toBe(405);
    expect(refused.json).toMatchObject({ error: { code: "METHOD_NOT_ALLOWED" } });
    expect(refused.headers.get("allow")).toBe("GET, POST");
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff");
    const unknown = await callApi({ method: "PROPFIND", path: "/api/v1/nope" });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ error: { code: "ROUTE_NOT_FOUND" } });
  });

  it("puts the API's security headers on every answer, refusals included", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/health"],
      ["GET", "/api/v1/agents"],
      ["DELETE", "/api/v1/health"],
      ["GET", "/api/v1/nope"],
    ] as const) {
      const { headers } = await callApi({ method, path });
      expect(headers.get("content-security-policy"), path).toContain("default-src 'none'");
      expect(headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(headers.get("x-frame-options"), path).toBe("DENY");
      expect(headers.get("referrer-policy"), path).toBe("same-origin");
    }
  });

  it("passes decoded path parameters to the route", async () => {
    const agent = await registerAgent();
    const encoded = `%${agent.name.charCodeAt(0).toString(16)}${agent.name.slice(1)}`;
    const response = await callApi({
      path: `/api/v1/agents/${encoded}`,
      headers: (await lead()).headers,
    });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ name: agent.name });
  });
});
