import { validate, compileErrors } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { API_ROUTES } from "../../lib/api/v1/routes";
import { AppError } from "../../lib/errors";
import { buildOpenApiDocument, ERROR_STATUSES, errorStatusesOf } from "../../lib/http/openapi";
import { defineRoute, jsonResponse } from "../../lib/http/route";
import {
  expectedHttpContract,
  HTTP_CONTRACT_MARKERS,
  readHttpContract,
} from "../../scripts/http-contract";
import { callApi, callRoute } from "../route-client";

const document = buildOpenApiDocument(API_ROUTES);

type Operation = {
  responses: Record<string, unknown>;
  security?: unknown[];
  "x-handshake-access"?: string;
  "x-handshake-scopes"?: string[];
};

function operationOf(method: string, path: string): Operation | undefined {
  const item = document.paths[path] as Record<string, Operation> | undefined;
  return item?.[method.toLowerCase()];
}

describe("the OpenAPI document", () => {
  it("has exactly the route table's operations", () => {
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(documented.sort()).toEqual(served.sort());
    expect(served).toContain("GET /api/v1/openapi.json");
  });

  it.each(API_ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    "documents %s: its success body, its errors and who may call it",
    (_name, route) => {
      const { handler } = route;
      expect(handler.responses[handler.status], "a schema for the default status").toBeDefined();
      const operation = operationOf(route.method, route.path);
      expect(operation).toBeDefined();
      const statuses = Object.keys(handler.responses).map(String);
      expect(Object.keys(operation?.responses ?? {})).toEqual(
        expect.arrayContaining([...statuses, ...errorStatusesOf(route).map(String)]),
      );
      expect(operation?.["x-handshake-access"]).toBe(handler.policy.access);
      expect(operation?.["x-handshake-scopes"]).toEqual(handler.policy.scopes);
      expect((operation?.security ?? []).length > 0).toBe(handler.policy.access !== "public");
    },
  );

  it("passes an OpenAPI 3.1 validator", async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(document.openapi).toBe("3.1.0");
  });

  it("names every error code by status, as lib/errors.ts maps them", () => {
    const responses = document.components?.responses ?? {};
    expect(Object.keys(responses).sort()).toEqual(ERROR_STATUSES.map((s) => `Error${s}`).sort());
    expect(JSON.stringify(responses.Error409)).toContain("ALREADY_DECIDED");
    expect(JSON.stringify(responses.Error409)).not.toContain("AGENT_NOT_FOUND");
  });

  it("says what a client sends and gets as it is: integers in the query, a download's media types, Retry-After", () => {
    // A third-party client, round nine: `wait` read as a string with a numeric default, the
    // export as JSON, and nothing said when to retry a 429 or a 503.
    const inbox = operationOf("GET", "/api/v1/inbox") as unknown as {
      parameters: { name: string; schema: Record<string, unknown> }[];
    };
    expect(inbox.parameters.find((parameter) => parameter.name === "wait")?.schema).toEqual({
      type: "integer",
      minimum: 0,
      maximum: 30,
      default: 0,
    });
    const download = operationOf("GET", "/api/v1/requests/export")?.responses["200"] as {
      content: Record<string, unknown>;
    };
    expect(Object.keys(download.content)).toEqual(["text/csv", "application/jsonl"]);
    const responses = document.components?.responses as Record<string, { headers?: object }>;
    for (const status of [429, 503]) {
      expect(responses[`Error${status}`]?.headers, String(status)).toHaveProperty("Retry-After");
    }
    expect(responses.Error400?.headers).toBeUndefined();
  });

  it("is served to anyone at GET /api/v1/openapi.json", async () => {
    const first = await callApi({ path: "/api/v1/openapi.json" });
    expect(first.status).toBe(200);
    expect(first.json).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it("is what docs/HTTP-API.md's generated table shows (npm run docs:http regenerates it)", async () => {
    const current = await readHttpContract();
    expect(current).toContain(HTTP_CONTRACT_MARKERS.start);
    expect(current).toContain("| GET    | `/api/v1/openapi.json`");
    expect(current).toBe(await expectedHttpContract(current));
  });
});

describe("declared responses in the API tests", () => {
  const declared = { 200: z.object({ name: z.string() }) };

  it("refuses a success body its schema does not describe", async () => {
    const wrongType = defineRoute({ access: "public", scopes: [], responses: declared }, async () =>
      jsonResponse({ name: 1 }),
    );
    await expect(callRoute(wrongType)).rejects.toThrow(/declared schema refuses it/);
    const extraField = defineRoute(
      { access: "public", scopes: [], responses: declared },
      async () => jsonResponse({ name: "a", secret: "b" }),
    );
    await expect(callRoute(extraField)).rejects.toThrow(/leaves out: secret/);
  });

  it("refuses a success status without a schema", async () => {
    const created = defineRoute({ access: "public", scopes: [], responses: declared }, async () =>
      jsonResponse({ name: "a" }, { status: 201 }),
    );
    await expect(callRoute(created)).rejects.toThrow(/no schema is declared for this status/);
  });

  it("refuses an error status the route's document does not list", async () => {
    const missing = defineRoute({ access: "public", scopes: [], responses: declared }, async () => {
      throw new AppError("AGENT_NOT_FOUND", "no such agent");
    });
    await expect(callRoute(missing)).rejects.toThrow(/its document lists only 500, 503/);
  });

  it("refuses a handler result that does not match at compile time", () => {
    const route = defineRoute(
      { access: "public", scopes: [], responses: declared },
      // @ts-expect-error: `name` must be a string
      async () => ({ name: 1 }),
    );
    expect(route.responses).toBe(declared);
  });
});
