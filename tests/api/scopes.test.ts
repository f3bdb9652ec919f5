import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN_SCOPES, type TokenScope } from "../../lib/shared/auth/scopes";
import { getDb } from "../../lib/db";
import type { Access } from "../../lib/http/route";
import { callRoute, signedInHuman } from "../route-client";
import { listDeclaredRoutes, type DeclaredRoute } from "../support/route-policies";
import { createToken, type TestToken } from "./fixtures";

afterAll(() => getDb().$disconnect());

// The scope × route table lives in docs/SECURITY.md; it is
// written from the routes' own declarations and must match them.
const TABLE_DOC = path.resolve(import.meta.dirname, "../../docs/SECURITY.md");
const TABLE_START = "<!-- scope-table:start -->";
const TABLE_END = "<!-- scope-table:end -->";

const ACCESS_LABELS: Record<Access, string> = {
  public: "anyone",
  human: "signed-in human",
  lead: "Lead",
  agent: "agent",
  human_or_agent: "human or agent",
  lead_or_agent: "Lead or agent",
};

function formatScopeTable(routes: DeclaredRoute[]): string {
  const header = `| route | session / agent access | ${TOKEN_SCOPES.join(" | ")} |`;
  const rule = `|---|---|${TOKEN_SCOPES.map(() => ":-:").join("|")}|`;
  const rows = routes.map(({ method, path: routePath, policy }) => {
    const cells = TOKEN_SCOPES.map((scope) =>
      policy.access === "public" ? "any" : policy.scopes.includes(scope) ? "✓" : "",
    );
    return `| \`${method} ${routePath}\` | ${ACCESS_LABELS[policy.access]} | ${cells.join(" | ")} |`;
  });
  return [header, rule, ...rows].join("\n");
}

/** A markdown table as rows of trimmed cells, so column padding (prettier's) does not matter. */
function tableCells(table: string): string[][] {
  return table
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("|"))
    .map((line) =>
      line
        .slice(1, -1)
        .split("|")
        .map((cell) => cell.trim()),
    )
    .filter((cells) => !cells.every((cell) => /^:?-+:?$/.test(cell)));
}

function readDocumentedTable(): string {
  const doc = readFileSync(TABLE_DOC, "utf8");
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) return `(no ${TABLE_START} … ${TABLE_END} in ${TABLE_DOC})`;
  return doc.slice(start + TABLE_START.length, end);
}

/** Whether a Lead's session may call a route of this access, i.e. a token could at all. */
function admitsLead(access: Access): boolean {
  return access !== "agent";
}

let routes: DeclaredRoute[];
const tokens = {} as Record<TokenScope, TestToken>;
let viewerRead: TestToken;

beforeAll(async () => {
  routes = await listDeclaredRoutes();
  for (const scope of TOKEN_SCOPES) tokens[scope] = await createToken(scope);
  viewerRead = await createToken("read", await signedInHuman("viewer"));
});

describe("the scope × route table", () => {
  it("finds every route, the new ones included", () => {
    expect(routes.length).toBeGreaterThan(30);
    expect(routes.map((route) => `${route.method} ${route.path}`)).toEqual(
      expect.arrayContaining([
        "POST /api/v1/agents/{name}/respawn",
        "POST /api/v1/tokens",
        "GET /api/v1/tokens",
        "DELETE /api/v1/tokens/{id}",
      ]),
    );
  });

  it("in the security document is the one the routes declare", () => {
    // On failure, paste the expected table (formatScopeTable's output) between the markers.
    expect(tableCells(readDocumentedTable())).toEqual(tableCells(formatScopeTable(routes)));
  });

  it("gives admin exactly what a Lead's session has, and supervisor only what the supervisor calls", () => {
    const withScope = (scope: TokenScope) =>
      routes
        .filter((route) => route.policy.scopes.includes(scope))
        .map((route) => `${route.method} ${route.path}`);
    const leadRoutes = routes
      .filter((route) => admitsLead(route.policy.access) && route.policy.access !== "public")
      .map((route) => `${route.method} ${route.path}`)
      // Signing out is a session matter; a connected session's agents belong to a connect token.
      .filter(
        (route) =>
          route !== "POST /api/v1/auth/logout" && route !== "POST /api/v1/connect/sessions",
      );
    expect(withScope("admin")).toEqual(leadRoutes);
    expect(withScope("supervisor").sort()).toEqual(
      [
        "GET /api/v1/events",
        "GET /api/v1/agents",
        "GET /api/v1/agents/{name}",
        "POST /api/v1/agents/{name}/worker-token",
        "POST /api/v1/agents/{name}/exit",
        "POST /api/v1/agents/{name}/respawn",
      ].sort(),
    );
    expect(withScope("connect").sort()).toEqual(
      [
        "POST /api/v1/agents",
        "POST /api/v1/agents/{name}/respawn",
        "POST /api/v1/connect/sessions",
      ].sort(),
    );
    expect(withScope("read").every((route) => route.startsWith("GET "))).toBe(true);
    expect(withScope("decide").filter((route) => !route.startsWith("GET "))).toEqual([
      "POST /api/v1/requests/{id}/deadline",
      "POST /api/v1/requests/{id}/responses",
      "POST /api/v1/responses",
    ]);
  });
});

// Walks every declared route with a token of every scope. Params name nothing that exists, so an
// allowed call ends in 400/404 and changes nothing; a refused one must be 403 before any of that.
describe("every route × every scope behaves as declared", () => {
  const PARAMS = { name: "nobody-scope-walk", id: "00000000-0000-4000-8000-000000000000" };

  async function callWith(route: DeclaredRoute, token: TestToken) {
    const routePath = route.path.replace("{name}", PARAMS.name).replace("{id}", PARAMS.id);
    return callRoute(route.handler, {
      method: route.method,
      path: routePath,
      headers: token.headers,
      params: PARAMS,
    });
  }

  it.each(TOKEN_SCOPES)("a Lead's '%s' token", async (scope) => {
    const mismatches: string[] = [];
    for (const route of routes) {
      const { status, json } = await callWith(route, tokens[scope]);
      const error = (json?.error ?? {}) as { code?: string; message?: string };
      const isRefused = status === 401 || status === 403;
      const shouldPass =
        route.policy.access === "public" ||
        (admitsLead(route.policy.access) && route.policy.scopes.includes(scope));
      const label = `${route.method} ${route.path}`;
      if (status >= 500) mismatches.push(`${label}: ${status}`);
      else if (shouldPass && isRefused) mismatches.push(`${label}: refused ${error.code}`);
      else if (!shouldPass && status !== 403) mismatches.push(`${label}: ${status}, not 403`);
      else if (!shouldPass && admitsLead(route.policy.access)) {
        if (error.code !== "INSUFFICIENT_SCOPE") mismatches.push(`${label}: ${error.code}`);
        for (const needed of route.policy.scopes) {
          if (!error.message?.includes(`'${needed}'`)) {
            mismatches.push(`${label}: the message does not name '${needed}'`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("a viewer's read token reads what a viewer reads and nothing a Lead does", async () => {
    const mismatches: string[] = [];
    for (const route of routes) {
      const { status } = await callWith(route, viewerRead);
      const isRefused = status === 401 || status === 403;
      const shouldPass =
        route.policy.access === "public" ||
        (["human", "human_or_agent"].includes(route.policy.access) &&
          route.policy.scopes.includes("read"));
      if (shouldPass === isRefused || status >= 500) {
        mismatches.push(`${route.method} ${route.path}: ${status}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
