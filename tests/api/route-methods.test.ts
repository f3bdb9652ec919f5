import { readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "../../lib/db";

afterAll(() => getDb().$disconnect());

const API_ROOT = path.resolve(import.meta.dirname, "../../app/api/v1");
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

type Handler = (
  request: Request,
  context: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response> | Response;

const routeFiles = readdirSync(API_ROOT, { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith("route.ts") && !file.includes("[..."))
  .sort();

describe("every API route answers every method in the JSON shape", () => {
  it("finds the routes", () => {
    expect(routeFiles.length).toBeGreaterThan(20);
  });

  it.each(routeFiles)("%s", async (file) => {
    const route = (await import(path.join(API_ROOT, file))) as Record<string, Handler | undefined>;
    const url = `http://localhost/api/v1/${path.dirname(file).replaceAll("\\", "/")}`;
    const refused: string[] = [];
    const allowHeaders = new Set<string | null>();
    for (const method of METHODS) {
      const handler = route[method];
      // A missing export would get Next's 405 with an empty body.
      expect(handler, `${method} is exported`).toBeTypeOf("function");
      const response = await handler!(new Request(url, { method }), {
        params: Promise.resolve({ name: "nobody", id: "none" }),
      });
      expect(response.status, `${method} ${url}`).toBeLessThan(500);
      const body = (await response.json()) as { error?: { code?: string } };
      if (response.status === 405) {
        expect(body.error?.code).toBe("METHOD_NOT_ALLOWED");
        refused.push(method);
        allowHeaders.add(response.headers.get("allow"));
      }
    }
    const implemented = METHODS.filter((method) => !refused.includes(method));
    expect(implemented.length).toBeGreaterThan(0);
    expect([...allowHeaders]).toEqual(refused.length > 0 ? [implemented.join(", ")] : []);
  });
});
