import { randomBytes } from "node:crypto";
import { POST as login } from "../app/api/v1/auth/login/route";
import { getDb } from "../lib/db";
import { createUser } from "../lib/users/mutations";

type RouteHandler = (
  request: Request,
  context: { params: Promise<Record<string, string | string[] | undefined>> },
) => Response | Promise<Response>;

export type CallOptions = {
  method?: string;
  path?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  params?: Record<string, string | string[]>;
};

/** Calls a Next route handler in-process with a real Request, as the HTTP server would. */
export async function callRoute(handler: RouteHandler, options: CallOptions = {}) {
  const headers = new Headers({ host: "127.0.0.1:3000", ...options.headers });
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const request = new Request(`http://127.0.0.1:3000${options.path ?? "/api/v1/test"}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
  });
  const response = await handler(request, { params: Promise.resolve(options.params ?? {}) });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  return { status: response.status, headers: response.headers, json };
}

/** Creates a human with the given role and returns a Cookie header for a fresh session. */
export async function signedInHuman(role: "lead" | "viewer") {
  const email = `${role}-${randomBytes(4).toString("hex")}@example.com`;
  const password = randomBytes(12).toString("base64url");
  await createUser(getDb(), { email, password, role });
  const response = await callRoute(login, { body: { email, password } });
  if (response.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(response.json)}`);
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .join("; ");
  return { email, password, cookie, headers: { cookie } };
}
