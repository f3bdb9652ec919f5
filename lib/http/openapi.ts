import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { SESSION_COOKIE_NAME } from "../auth/auth";
import { SESSION_KEY_HEADER } from "../shared/auth/session-key";
import { errorStatus, type ErrorCode } from "../errors";
import type { Access } from "./route";
import type { ApiRoute } from "./router";

type GeneratedDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;
export type OpenApiDocument = GeneratedDocument & {
  paths: NonNullable<GeneratedDocument["paths"]>;
};

const BEARER = "bearerToken";
const SESSION = "sessionCookie";
const SESSION_KEY = "sessionKey";
/** Both together: a session cookie counts only with its key (decision 080). */
const SIGNED_IN = { [SESSION]: [], [SESSION_KEY]: [] };

/** Who may call, as OpenAPI security requirements: any one of them is enough. */
const SECURITY_BY_ACCESS: Record<Access, Record<string, string[]>[]> = {
  public: [],
  human: [SIGNED_IN, { [BEARER]: [] }],
  lead: [SIGNED_IN, { [BEARER]: [] }],
  agent: [{ [BEARER]: [] }],
  human_or_agent: [SIGNED_IN, { [BEARER]: [] }],
  lead_or_agent: [SIGNED_IN, { [BEARER]: [] }],
};

const ACCESS_PROSE: Record<Access, string> = {
  public: "anyone, signed in or not",
  human: "a signed-in human of any role (session cookie or API token)",
  lead: "a human with the lead role (session cookie or API token)",
  agent: "an agent, with its own agent token",
  human_or_agent: "a signed-in human of any role, or an agent",
  lead_or_agent: "a human with the lead role, or an agent",
};

function codesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(errorStatus) as ErrorCode[]).filter((code) => errorStatus[code] === status);
}

/** Every status lib/errors.ts maps a code to, in order. */
export const ERROR_STATUSES: readonly number[] = [...new Set(Object.values(errorStatus))].sort(
  (a, b) => a - b,
);

/**
 * The error statuses a route can answer with, from what it declares: the API tests fail when a
 * route answers an error status its document does not list.
 */
export function errorStatusesOf(route: ApiRoute): number[] {
  const { policy, schemas, agentRate } = route.handler;
  const statuses = new Set([500, 503]);
  if (schemas.body || schemas.query || schemas.params) statuses.add(400);
  if (schemas.body) [413, 415].forEach((status) => statuses.add(status));
  if (policy.access !== "public") [401, 403].forEach((status) => statuses.add(status));
  if (schemas.params || route.method !== "GET") statuses.add(404);
  if (route.method !== "GET") [409, 422].forEach((status) => statuses.add(status));
  if (agentRate) statuses.add(429);
  for (const code of route.handler.errors) statuses.add(errorStatus[code]);
  return [...statuses].sort((a, b) => a - b);
}

/** The one error body (lib/errors.ts), its `code` narrowed to those that map to `status`. */
function errorBodyFor(status: number) {
  return {
    type: "object" as const,
    required: ["error"],
    properties: {
      error: {
        type: "object" as const,
        required: ["code", "message"],
        properties: {
          code: { type: "string" as const, enum: codesWithStatus(status) },
          message: { type: "string" as const },
        },
        description: "Some codes add fields beside `code` and `message`, e.g. `details`.",
      },
    },
  };
}

const HTTP_REASON: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  431: "Request Header Fields Too Large",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** Statuses whose answers say when to ask again: a limit, or a database that will be back. */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);
const RETRY_AFTER = {
  description: "Seconds to wait before asking again.",
  schema: { type: "integer" as const, minimum: 1 },
};

function errorTable(): string {
  const rows = ERROR_STATUSES.map(
    (status) =>
      `| ${status} | ${codesWithStatus(status)
        .map((code) => `\`${code}\``)
        .join(", ")} |`,
  );
  return ["| Status | Error codes |", "| --- | --- |", ...rows].join("\n");
}

/** `/api/v1/agents/{name}/force-stop` answering POST → `postAgentsNameForceStop`. */
function operationId(route: ApiRoute): string {
  const words = route.path
    .replace(/^\/api\/v1\//, "")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== "" && word !== "json");
  return [route.method.toLowerCase(), ...words.map((w) => w[0]?.toUpperCase() + w.slice(1))].join(
    "",
  );
}

function describeCallers(route: ApiRoute): string {
  const { access, scopes } = route.handler.policy;
  const tokens =
    access === "public" || access === "agent"
      ? ""
      : scopes.length > 0
        ? ` API tokens with scope ${scopes.map((scope) => `\`${scope}\``).join(" or ")}.`
        : " No API token may call it.";
  return `Callers: ${ACCESS_PROSE[access]}.${tokens}`;
}

/**
 * The OpenAPI 3.1 document of the route table: every path and method, its parameters and body,
 * its success bodies, the error statuses it can answer with, and who may call it.
 */
export function buildOpenApiDocument(routes: readonly ApiRoute[]): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", BEARER, {
    type: "http",
    scheme: "bearer",
    description:
      "An API token a human created (`POST /api/v1/tokens`, scoped) or an agent's own token.",
  });
  registry.registerComponent("securitySchemes", SESSION, {
    type: "apiKey",
    in: "cookie",
    name: SESSION_COOKIE_NAME,
    description:
      "The console's session cookie from `POST /api/v1/auth/login`; mutations must come from the console's own origin.",
  });
  registry.registerComponent("securitySchemes", SESSION_KEY, {
    type: "apiKey",
    in: "header",
    name: SESSION_KEY_HEADER,
    description:
      "The `sessionKey` the same sign-in answered: without it the cookie signs in nobody, since a browser sends cookies to every port of the host.",
  });
  const errorResponses = new Map(
    ERROR_STATUSES.map((status) => [
      status,
      registry.registerComponent("responses", `Error${status}`, {
        description: `${HTTP_REASON[status] ?? "Error"}: ${codesWithStatus(status).join(", ")}`,
        ...(RETRIED_STATUSES.has(status) && { headers: { "Retry-After": RETRY_AFTER } }),
        content: { "application/json": { schema: errorBodyFor(status) } },
      }).ref,
    ]),
  );
  for (const route of routes) {
    const { handler } = route;
    const { body, query, params } = handler.schemas;
    const successes = Object.entries(handler.responses).map(([status, schema]) => [
      status,
      {
        description: `${status === "201" ? "Created" : "OK"}`,
        content: Object.fromEntries(handler.mediaTypes.map((type) => [type, { schema }])),
      },
    ]);
    const errors = errorStatusesOf(route).map((status) => [
      String(status),
      errorResponses.get(status),
    ]);
    registry.registerPath({
      method: route.method.toLowerCase() as Lowercase<typeof route.method>,
      path: route.path,
      operationId: operationId(route),
      tags: [route.path.split("/")[3] ?? "api"],
      description: describeCallers(route),
      security: SECURITY_BY_ACCESS[handler.policy.access],
      "x-handshake-access": handler.policy.access,
      "x-handshake-scopes": [...handler.policy.scopes],
      request: {
        params: params as never,
        query: query as never,
        body: body
          ? { required: true, content: { "application/json": { schema: body } } }
          : undefined,
      },
      responses: Object.fromEntries([...successes, ...errors]),
    });
  }
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Handshake HTTP API",
      version: "1",
      description: [
        "Every refusal from `/api/v1` has one shape, `{error: {code, message, …}}`, and its code fixes the status:",
        "",
        errorTable(),
        "",
        "This document is generated from the route table (`lib/api/v1/routes.ts`) and the zod schemas its routes declare.",
      ].join("\n"),
    },
  });
  return { ...document, paths: document.paths ?? {} };
}
