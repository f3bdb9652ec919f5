import { randomBytes } from "node:crypto";
import { login } from "../lib/api/v1/auth";
import { createApi } from "../lib/api/v1/routes";
import { CLIENT_IP_HEADER } from "../lib/auth/sign-in-limit";
import { SESSION_KEY_HEADER } from "../lib/shared/auth/session-key";
import { getDb } from "../lib/db";
import type { RouteHandler } from "../lib/http/route";
import type { ApiRoute } from "../lib/http/router";
import { createUser } from "../lib/users/mutations";
import { checkDeclaredResponse, findRoute, routeOf } from "./support/declared-responses";

export type CallOptions = {
  method?: string;
  path?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  params?: Record<string, string>;
};

function toRequest(options: CallOptions): Request {
  const headers = new Headers({ host: "127.0.0.1:3000", ...options.headers });
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return new Request(`http://127.0.0.1:3000${options.path ?? "/api/v1/test"}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
  });
}

/** Reads an answer, held to what its route declares (tests/support/declared-responses.ts). */
async function read(response: Response, route: ApiRoute | undefined) {
  const text = await response.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  checkDeclaredResponse(route, response.status, json);
  return { status: response.status, headers: response.headers, json };
}

/** Calls one declared route in-process with a real Request and its path parameters. */
export async function callRoute(handler: RouteHandler, options: CallOptions = {}) {
  const request = toRequest(options);
  const route = routeOf(handler, request.method, new URL(request.url).pathname);
  return read(await handler(request, options.params), route);
}

let api: ReturnType<typeof createApi> | undefined;

/** Sends a request through the API's real router (the table server.ts serves), in-process. */
export async function callApi(options: CallOptions & { path: string }) {
  api ??= createApi();
  const request = toRequest(options);
  return read(await api.fetch(request), findRoute(request.method, new URL(request.url).pathname));
}

/**
 * Creates a human with the given role and signs them in: the fresh session's Cookie header and
 * the key every call of it carries beside the cookie (decision 080).
 */
export async function signedInHuman(role: "lead" | "viewer") {
  const email = `${role}-${randomBytes(4).toString("hex")}@example.com`;
  const password = randomBytes(12).toString("base64url");
  await createUser(getDb(), { email, password, role });
  return { email, password, ...(await signInAs(email, password)) };
}

/** A new session of an existing person, as the console's sign-in makes one. */
export async function signInAs(email: string, password: string) {
  // A client address of its own: every file's sign-ins would otherwise share one bucket of the
  // sign-in limit (decision 079).
  const [a = 0, b = 0, c = 0] = randomBytes(3);
  const response = await callRoute(login.POST, {
    body: { email, password },
    headers: { [CLIENT_IP_HEADER]: `10.${a}.${b}.${c}` },
  });
  if (response.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(response.json)}`);
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .join("; ");
  const sessionKey = String((response.json as { sessionKey?: unknown }).sessionKey);
  return { cookie, sessionKey, headers: { cookie, [SESSION_KEY_HEADER]: sessionKey } };
}
