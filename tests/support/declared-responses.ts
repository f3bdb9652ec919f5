import { API_ROUTES } from "../../lib/api/v1/routes";
import { errorStatus, type ErrorCode } from "../../lib/errors";
import { errorStatusesOf } from "../../lib/http/openapi";
import type { RouteHandler } from "../../lib/http/route";
import type { ApiMethod, ApiRoute } from "../../lib/http/router";
import { errorBodySchema } from "../../lib/shared/api/error";

const ROUTE_PATTERNS = API_ROUTES.map((route) => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/\{\w+\}/g, "[^/]+").replaceAll(".", "\\.")}$`),
}));

/** The table's route a request reaches, if any (the router itself answers the others). */
export function findRoute(method: string, pathname: string): ApiRoute | undefined {
  // A literal path (`/rules/preview`) is its own path, never an `{id}` of its neighbour's.
  const isLiteral = ROUTE_PATTERNS.some(({ route }) => route.path === pathname);
  return ROUTE_PATTERNS.find(
    ({ route, pattern }) =>
      route.method === method && (isLiteral ? route.path === pathname : pattern.test(pathname)),
  )?.route;
}

/** The route a handler is in the table as; a handler outside the table stands for itself. */
export function routeOf(handler: RouteHandler, method: string, pathname: string): ApiRoute {
  return (
    API_ROUTES.find((route) => route.handler === handler) ?? {
      method: method as ApiMethod,
      path: pathname,
      handler,
    }
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Paths of fields the answer carries that the parsed result dropped: a schema that says too little. */
function undeclaredFields(sent: unknown, parsed: unknown, path = ""): string[] {
  if (Array.isArray(sent) && Array.isArray(parsed)) {
    return sent.flatMap((item, index) =>
      undeclaredFields(item, parsed[index], `${path}[${index}]`),
    );
  }
  if (!isPlainObject(sent) || !isPlainObject(parsed)) return [];
  return Object.entries(sent).flatMap(([key, value]) => {
    const at = path ? `${path}.${key}` : key;
    return key in parsed ? undeclaredFields(value, parsed[key], at) : [at];
  });
}

/**
 * Holds an answer to what its route declares (test-only, so it costs production nothing): a success
 * body must parse against the schema declared for its status and carry no field the schema leaves
 * out; an error must have the one error shape, a code lib/errors.ts maps to that status, and a
 * status the route's document lists. Throws with what lies.
 */
export function checkDeclaredResponse(
  route: ApiRoute | undefined,
  status: number,
  json: unknown,
): void {
  const where = route ? `${route.method} ${route.path}` : "the router";
  const fail = (problem: string) => {
    throw new Error(
      `${where} answered ${status}: ${problem}\n${JSON.stringify(json)?.slice(0, 2000)}`,
    );
  };
  const schema = route?.handler.responses[status];
  if (schema) {
    const parsed = schema.safeParse(json);
    if (!parsed.success) fail(`its declared schema refuses it: ${parsed.error.message}`);
    const extra = undeclaredFields(json, parsed.data);
    if (extra.length > 0) fail(`fields its declared schema leaves out: ${extra.join(", ")}`);
    return;
  }
  if (json === null && route === undefined) return;
  if (status < 400) fail("no schema is declared for this status");
  const error = errorBodySchema.safeParse(json);
  if (!error.success) fail("not the API's error shape {error: {code, message}}");
  const code = error.data?.error.code as ErrorCode;
  if (errorStatus[code] !== status) fail(`lib/errors.ts maps ${code} to ${errorStatus[code]}`);
  if (route && !errorStatusesOf(route).includes(status)) {
    fail(`its document lists only ${errorStatusesOf(route).join(", ")}`);
  }
}
